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

This prints, for all_gather and reduce_scatter at 2, 4 and 8 ranks and 32 and
128 MiB, SimuMax's time against trainsim's ring on one B200 node with the
start-up set to 0 (`trainsim collective`), their difference, and the mean of the
differences: the preset's gather_scatter_startup. all_reduce is printed beside
them for comparison (trainsim prices it with ring and NVLS latencies of its own).

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


def trainsim_us(trainsim, kind, n, size):
    cluster = {"cluster": {"gpu": "B200", "num_nodes": 1, "intra_node": {"gather_scatter_startup": "0us"}}}
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
    gaps = []
    print(f"{'op':15} {'ranks':>5} {'MiB':>5} {'SimuMax us':>11} {'trainsim us':>12} {'difference':>11}")
    for kind in ("all_gather", "reduce_scatter", "all_reduce"):
        for n in RANKS:
            for size in SIZES:
                theirs = simumax_us(ops[kind], n, size)
                ours = trainsim_us(sys.argv[2], kind, n, size)
                if kind != "all_reduce":
                    gaps.append(theirs - ours)
                print(f"{kind:15} {n:5d} {size // 2**20:5d} {theirs:11.1f} {ours:12.1f} {theirs - ours:+11.1f}")
    print(f"all_gather and reduce_scatter: differences {min(gaps):.1f} to {max(gaps):.1f} us, "
          f"mean {statistics.mean(gaps):.1f} us")


if __name__ == "__main__":
    main()
