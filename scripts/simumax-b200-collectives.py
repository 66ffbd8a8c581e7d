#!/usr/bin/env python3
"""The B200 preset's gather_scatter_startup from SimuMax's B200 collective measurements.

SimuMax (github.com/MooreThreads/SimuMax, commit 4dcaae5) prices a collective on
its B200 machine with networks.high_intra_node.op of configs/system/
b200_bf16_ceperm.json (SimuMax simumax/core/config.py, compute_net_op_time):

    T = S x scale x (n-1)/n / (900 GiB/s x efficient_factor)
        + latency_us x (n-1) x scale + fixed_latency_us

efficient_factor and latency_us are a line through nccl-tests points from 1 MiB
up; fixed_latency_us is what bursts of 32 MiB torch.distributed calls at 2, 4
and 8 ranks took beyond that line (tools/b200/build_current_machine_system_config.py,
simu_tools/efficency_test/measure_comm_burst_window_worker.py): the time of a
collective as a framework issues it.

This prints, for all_gather, reduce_scatter and all_to_all at 2, 4 and 8 ranks
and 32 and 128 MiB, SimuMax's time against trainsim's on one B200 node with the
start-ups set to 0 (`trainsim collective`), their difference, and the mean of the
differences: the preset's gather_scatter_startup and all_to_all_startup. The
all_to_all runs at SimuMax's all2all efficient_factor (of 900 GiB/s, restated of
900 GB/s: the preset's all_to_all_efficiency). all_reduce is printed beside them
for comparison (trainsim prices it with ring and NVLS latencies of its own).

Usage: scripts/simumax-b200-collectives.py PATH/TO/b200_bf16_ceperm.json PATH/TO/trainsim
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile

SIZES = (32 * 2**20, 128 * 2**20)
RANKS = (2, 4, 8)
LINK = 900 * 2**30  # SimuMax's bandwidth.gbps, read as GiB/s


def simumax_us(op, n, size):
    scale, offset = op["scale"], op["offset"]
    moved = size * scale + size * scale / n * offset
    fixed = op.get("fixed_latency_us") or 0.0
    by_n = op.get("fixed_latency_us_by_comm_num") or {}
    fixed = by_n.get(str(n), fixed)
    return moved / (LINK * op["efficient_factor"]) * 1e6 + op["latency_us"] * (n + offset) * scale + fixed


def trainsim_us(trainsim, kind, n, size, a2a_efficiency):
    intra = {"gather_scatter_startup": "0us", "all_to_all_startup": "0us", "all_to_all_efficiency": a2a_efficiency}
    cluster = {"cluster": {"gpu": "B200", "num_nodes": 1, "intra_node": intra}}
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(cluster, f)
        path = f.name
    try:
        out = subprocess.run([trainsim, "collective", "--cluster", path, "--op", kind, "-b", str(size), "-e",
                              str(size), "-g", str(n)], check=True, capture_output=True, text=True).stdout
    finally:
        os.unlink(path)
    for line in out.splitlines():
        fields = line.split()
        if fields and fields[0] == str(size):
            return float(fields[5])
    raise SystemExit(f"no {size} B row in trainsim collective's output:\n{out}")


def main():
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    ops = json.load(open(sys.argv[1]))["networks"]["high_intra_node"]["op"]
    # all_to_all_efficiency: SimuMax's busbw share of 900 GiB/s, as a share of 900 GB/s.
    a2a_efficiency = round(ops["all2all"]["efficient_factor"] * 2**30 / 1e9, 4)
    gaps = {"gather_scatter": [], "all_to_all": []}
    print(f"{'op':15} {'ranks':>5} {'MiB':>5} {'SimuMax us':>11} {'trainsim us':>12} {'difference':>11}")
    for kind, theirs_name in (("all_gather", "all_gather"), ("reduce_scatter", "reduce_scatter"),
                              ("all_to_all", "all2all"), ("all_reduce", "all_reduce")):
        for n in RANKS:
            for size in SIZES:
                theirs = simumax_us(ops[theirs_name], n, size)
                ours = trainsim_us(sys.argv[2], kind, n, size, a2a_efficiency)
                if kind in ("all_gather", "reduce_scatter"):
                    gaps["gather_scatter"].append(theirs - ours)
                elif kind == "all_to_all":
                    gaps["all_to_all"].append(theirs - ours)
                print(f"{kind:15} {n:5d} {size // 2**20:5d} {theirs:11.1f} {ours:12.1f} {theirs - ours:+11.1f}")
    for name, g in gaps.items():
        print(f"{name}: differences {min(g):.1f} to {max(g):.1f} us, mean {statistics.mean(g):.1f} us")
    print(f"all_to_all_efficiency {a2a_efficiency}")


if __name__ == "__main__":
    main()
