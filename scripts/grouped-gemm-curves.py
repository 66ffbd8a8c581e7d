#!/usr/bin/env python3
"""A GPU preset's grouped_matmul_efficiency from scripts/pytorch-grouped-gemm-stages.py rows.

Each measured case is c grouped GEMMs of one expert's F = 2 t n k in one stage (forward,
data gradient, weight gradient); its efficiency is achieved FLOP/s over the bf16 peak the
measurement was taken against. Per stage, the rows are grouped by octave of F as
trainsim groups a calibration profile's GEMMs (hw::measured_matmul_efficiency; the
octave_points rule of scripts/efficiency_points.py): one point per octave at the
geometric mean of its F with the median of its rows' efficiencies.

Usage: scripts/grouped-gemm-curves.py GROUPED.json
Prints the grouped_matmul_efficiency object (one line of JSON), then per stage and octave
the rows' spread (min, median, max) and the fp8 rowwise forward's median over bf16's.
"""
import json
import math
import statistics
import sys
from collections import defaultdict

from efficiency_points import octave_points

STAGES = ("forward", "data_gradient", "weight_gradient")


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[-3], file=sys.stderr)
        return 2
    with open(sys.argv[1], encoding="utf-8") as f:
        measured = json.load(f)
    rows = defaultdict(list)
    for case in measured["cases"]:
        for stage in case.get("stages", []):
            rows[stage["stage"]].append((stage["flops_per_gemm"], stage["efficiency"]))
    print(json.dumps({name: octave_points(rows[name]) for name in STAGES}))
    for name in STAGES + ("forward_fp8_rowwise",):
        octaves = defaultdict(list)
        for flops, efficiency in rows[name]:
            octaves[math.floor(math.log2(flops))].append(efficiency)
        spread = ", ".join(f"2^{o}: {min(e):.2f}/{statistics.median(e):.2f}/{max(e):.2f}"
                           for o, e in sorted(octaves.items()))
        print(f"{name}: {spread}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
