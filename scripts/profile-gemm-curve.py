#!/usr/bin/env python3
"""A hardware preset's matmul efficiency points from a calibration profile's GEMM rows.

The rule is the one trainsim applies to a profile's GEMMs (hw::measured_matmul_efficiency,
sim/hardware/profile_efficiency.cpp): the rows of one dtype (and, for fp8, one
accumulation mode) grouped by octave of F = 2 m n k (floor(log2 F)), one point per
octave at the geometric mean of its F with the median of its rows' achieved
FLOP/s / peak (capped at 1).

Usage: scripts/profile-gemm-curve.py PROFILE.json DTYPE PEAK_TFLOPS [fast|default]
  DTYPE: bf16, fp16, tf32, fp32, fp8; the last argument picks fp8 rows by their
  "accumulation" ("fast", or "default" for rows without the key).
Prints the points as a JSON array.
"""
import json
import sys

from efficiency_points import octave_points


def main() -> int:
    if len(sys.argv) not in (4, 5):
        print(__doc__.strip().splitlines()[-5], file=sys.stderr)
        return 2
    with open(sys.argv[1], encoding="utf-8") as f:
        profile = json.load(f)
    dtype, peak = sys.argv[2], float(sys.argv[3]) * 1e12
    accumulation = sys.argv[4] if len(sys.argv) == 5 else None
    rows = []
    for row in profile["gemm"]:
        if row["dtype"] != dtype or not row["seconds"] > 0:
            continue
        if accumulation is not None and row.get("accumulation", "default") != accumulation:
            continue
        flops = 2.0 * row["m"] * row["n"] * row["k"]
        rows.append((flops, flops / row["seconds"] / peak))
    points = octave_points(rows)
    print(json.dumps(points))
    return 0


if __name__ == "__main__":
    sys.exit(main())
