#!/usr/bin/env python3
"""One training step's kernels out of an Nsight Compute CSV log, summed per kernel.

  ncu --metrics gpu__time_duration.sum --csv --print-units base --log-file LOG.csv PROGRAM ...
  scripts/ncu-step.py LOG.csv [--optimizer REGEX] [--step K] [--out TABLE.csv]

A step is every kernel after one optimizer step's kernels up to and including the next
one's (REGEX matches the optimizer's kernel names: trainsim-train's adamw_kernel, PyTorch's
fused AdamW multi_tensor_apply_kernel<FusedOptimizerTensorListMetadata...>, consecutive
launches being one optimizer step). --step picks the K-th such step (default: the last).
Prints, and with --out writes, one row per kernel name: launches, total and mean
microseconds, sorted by total; the last line is the step's kernel time.
"""
import argparse
import collections
import csv
import os
import re
import sys


def short(name):
    """A kernel's function name without namespaces, template or parameter lists."""
    n = re.sub(r"\(anonymous namespace\)::|<unnamed>::", "", name)
    depth, out = 0, []
    for ch in n:  # drop template arguments and parameter lists, nesting included
        if ch in "<(":
            depth += 1
        elif ch in ">)":
            depth -= 1
        elif depth == 0:
            out.append(ch)
    base = "".join(out).replace("void ", "").strip().split("::")[-1]
    # Keep what tells kernels apart that share a function (the optimizer's, cuBLAS tiles).
    if "FusedOptimizer" in name:
        base += "<FusedOptimizer>"
    return base or name[:60]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("log")
    ap.add_argument("--optimizer", default=r"adamw_kernel|FusedOptimizer")
    ap.add_argument("--step", type=int, default=-1)
    ap.add_argument("--out")
    a = ap.parse_args()
    with open(a.log) as f:
        rows = list(csv.DictReader(line for line in f if line.startswith('"')))
    rows = [r for r in rows if r.get("Metric Name") == "gpu__time_duration.sum"]
    if not rows:
        sys.exit(f"{a.log}: no gpu__time_duration.sum rows (expected ncu --csv --metrics gpu__time_duration.sum)")
    scale = {"ns": 1e-3, "us": 1.0, "usecond": 1.0, "ms": 1e3, "nsecond": 1e-3}.get(rows[0]["Metric Unit"], None)
    if scale is None:
        sys.exit(f"{a.log}: unknown unit {rows[0]['Metric Unit']!r}")
    kernels = [(r["Kernel Name"], float(r["Metric Value"].replace(",", "")) * scale) for r in rows]
    opt = re.compile(a.optimizer)
    ends = []  # index of the last kernel of each optimizer step
    for i, (name, _) in enumerate(kernels):
        if opt.search(name) and (i + 1 == len(kernels) or not opt.search(kernels[i + 1][0])):
            ends.append(i)
    if len(ends) < 2:
        sys.exit(f"{a.log}: fewer than two optimizer steps matching {a.optimizer!r}; no whole step to show")
    k = a.step if a.step >= 0 else len(ends) - 2
    if not 0 <= k < len(ends) - 1:
        sys.exit(f"--step {a.step}: the log holds {len(ends) - 1} whole steps")
    step = kernels[ends[k] + 1: ends[k + 1] + 1]
    table = collections.OrderedDict()
    for name, us in step:
        n, t = table.get(short(name), (0, 0.0))
        table[short(name)] = (n + 1, t + us)
    ordered = sorted(table.items(), key=lambda kv: -kv[1][1])
    total = sum(t for _, (_, t) in ordered)
    for name, (n, t) in ordered:
        print(f"{name:60s} {n:5d} {t:11.1f} us {t / n:9.1f} us each")
    print(f"step {k}: {len(step)} kernels, {total:.1f} us of kernel time")
    if a.out:
        tmp = a.out + ".tmp"
        with open(tmp, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["kernel", "launches", "total_us", "mean_us"])
            for name, (n, t) in ordered:
                w.writerow([name, n, f"{t:.3f}", f"{t / n:.3f}"])
        os.replace(tmp, a.out)


if __name__ == "__main__":
    main()
