#!/usr/bin/env python3
"""The B200 preset's matmul_efficiency points from SimuMax's measured B200 GEMMs.

SimuMax (github.com/MooreThreads/SimuMax, commit 4dcaae5) publishes the system
config its B200 release was simulated with, configs/system/b200_bf16_ceperm.json,
built on the machine its B200 training runs were measured on
(tools/b200/build_current_machine_system_config.py): under
accelerator.op.matmul.accurate_efficient_factor, the achieved share of 2250
TFLOP/s of every bf16 GEMM of its models' training shapes, in the three layouts
a linear layer runs (TN forward, NN data gradient, NT weight gradient with fp32
or bf16 accumulation).

This turns them into matmul_efficiency points by the rule trainsim applies to a
calibration profile's GEMMs (hw::measured_matmul_efficiency,
sim/hardware/profile_efficiency.cpp): rows grouped by octave of F = 2 b m n k
(floor(log2 F)), one point per octave at the geometric mean of its F with the
median of its rows' efficiencies, all layouts together (a training step runs
one forward and two backward GEMMs per linear layer).

Usage: scripts/simumax-gemm-curve.py PATH/TO/b200_bf16_ceperm.json
Prints the points as JSON, and per octave the row count and per-layout medians.
"""
import json
import math
import statistics
import sys
from collections import defaultdict


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[-2], file=sys.stderr)
        return 2
    with open(sys.argv[1], encoding="utf-8") as f:
        system = json.load(f)
    rows = system["accelerator"]["op"]["matmul"]["accurate_efficient_factor"]
    octaves = defaultdict(list)
    for key, efficiency in rows.items():
        fields = dict(part.strip().split("=", 1) for part in key.split(","))
        flops = 2.0 * int(fields["b"]) * int(fields["m"]) * int(fields["n"]) * int(fields["k"])
        octaves[math.floor(math.log2(flops))].append((flops, float(efficiency), fields["layout"]))
    points = []
    for octave in sorted(octaves):
        group = octaves[octave]
        mean_log = sum(math.log(f) for f, _, _ in group) / len(group)
        median = min(statistics.median(e for _, e, _ in group), 1.0)
        points.append([float(f"{math.exp(mean_log):.4g}"), round(median, 3)])
        by_layout = {
            layout: round(statistics.median(e for _, e, l in group if l == layout), 3)
            for layout in sorted({l for _, _, l in group})
        }
        print(f"octave 2^{octave}: {len(group)} rows, median {median:.3f}, by layout {by_layout}", file=sys.stderr)
    print(json.dumps(points))
    return 0


if __name__ == "__main__":
    sys.exit(main())
