#!/usr/bin/env python3
"""A hardware preset's attention_efficiency from a calibration profile's sdpa rows.

The rows are causal bf16 scaled_dot_product_attention forward and backward passes
(scripts/pytorch-kernel-reference.py: cuDNN or flash as PyTorch picks), their FLOPs
counted as trainsim counts flash attention (forward 2 b h s^2 d, the causal half of
4 b h s^2 d; backward 2.5x). Each row becomes a point [FLOPs, achieved FLOP/s / peak]
of its head dimension and direction, sorted by FLOPs; rows at the same FLOPs are
averaged (as hw::LogCurve does with a profile's rows). Further files add their rows
(scripts/pytorch-long-attention.py's, in the same form); rows that name a backend other
than cuDNN (its flash rows, kept for comparison) are left out.

Usage: scripts/profile-attention-curve.py PROFILE.json [MORE.json ...] PEAK_TFLOPS
Prints the attention_efficiency array (docs/scenario.md, "Hardware file").
"""
import json
import sys

from efficiency_points import attention_entries


def main() -> int:
    if len(sys.argv) < 3:
        print(__doc__.strip().splitlines()[-2], file=sys.stderr)
        return 2
    peak = float(sys.argv[-1]) * 1e12
    rows = []
    for path in sys.argv[1:-1]:
        with open(path, encoding="utf-8") as f:
            profile = json.load(f)
        for row in profile["kernels"]:
            direction = {"sdpa_forward": "forward", "sdpa_backward": "backward"}.get(row["name"])
            if direction is not None and row.get("backend", "cudnn") == "cudnn":
                rows.append((row["shape"]["head_dim"], direction, row["flops"], row["flops"] / row["seconds"] / peak))
    out = attention_entries(rows)
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
