#!/usr/bin/env python3
"""The B200 preset's matmul_efficiency and attention_efficiency from SimuMax's B200 measurements.

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

Under accelerator.op.sdp_fwd / sdp_bwd the same file holds causal flash attention
(Transformer Engine's DotProductAttention, attn_mask_type causal) measured at
Llama 3 shapes, their FLOPs counted dense (simu_tools/efficency_test/
test_fa_efficiency.py: forward 2 b s^2 h (d_qk + d_v), backward 5 b s^2 h d): half of
that is what trainsim counts (the causal half, docs/model.md "Attention
efficiency"), so each efficiency is halved; one point per FLOPs (rows at the same
FLOPs, contiguous or not, averaged). Its rows of DeepSeek V2/V3's multi-head latent
attention (d_qk 192 = 128 + 64 rotary, d_v 128) make an entry of their own, with
value_head_dim 128.

Under accelerator.op.group_matmul.accurate_efficient_factor it holds Transformer
Engine's grouped GEMMs at the expert shapes of DeepSeek V2/V3 (ng experts of M
tokens, N x K weights), each in its three stages (fwd; bwd_grad_act, the data
gradient; bwd_grad_w, the weight gradient accumulated into fp32 main_grad): the
grouped_matmul_efficiency curves, one per stage, by octave of one expert's
F = 2 M N K, by the same rule.

Usage: scripts/simumax-b200-curves.py PATH/TO/b200_bf16_ceperm.json
Prints the matmul points, the attention_efficiency array and the
grouped_matmul_efficiency object as JSON (three lines), and per GEMM octave the
per-layout medians.
"""
import json
import math
import statistics
import sys
from collections import defaultdict

from efficiency_points import attention_entries, octave_points


def fields_of(key):
    return dict(part.strip().split("=", 1) for part in key.split(","))


def attention_curves(system):
    rows = []
    for op, direction, factor in (("sdp_fwd", "forward", 1.0), ("sdp_bwd", "backward", 2.5)):
        for key, efficiency in system["accelerator"]["op"][op]["accurate_efficient_factor"].items():
            f = fields_of(key)
            d, d_v = int(f["qk_head_dim"]), int(f["v_head_dim"])
            heads = max(int(f["head_num"]), int(f["kv_head_num"]))
            flops = factor * int(f["batch"]) * heads * int(f["seq_len"]) ** 2 * (d + d_v)
            rows.append((d if d == d_v else (d, d_v), direction, flops, float(efficiency) / 2.0))
    return attention_entries(rows)


def grouped_curves(system):
    stages = {"fwd": "forward", "bwd_grad_act": "data_gradient", "bwd_grad_w": "weight_gradient"}
    rows = defaultdict(list)
    for key, efficiency in system["accelerator"]["op"]["group_matmul"]["accurate_efficient_factor"].items():
        f = fields_of(key)
        rows[stages[f["stage"]]].append((2.0 * int(f["M"]) * int(f["N"]) * int(f["K"]), float(efficiency)))
    return {name: octave_points(rows[name]) for name in stages.values()}


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[-3], file=sys.stderr)
        return 2
    with open(sys.argv[1], encoding="utf-8") as f:
        system = json.load(f)
    rows = system["accelerator"]["op"]["matmul"]["accurate_efficient_factor"]
    gemms = []  # (flops, efficiency, layout)
    for key, efficiency in rows.items():
        fields = fields_of(key)
        flops = 2.0 * int(fields["b"]) * int(fields["m"]) * int(fields["n"]) * int(fields["k"])
        gemms.append((flops, float(efficiency), fields["layout"]))
    points = octave_points((f, e) for f, e, _ in gemms)
    by_octave = defaultdict(lambda: defaultdict(list))
    for flops, efficiency, layout in gemms:
        by_octave[math.floor(math.log2(flops))][layout].append(efficiency)
    for octave in sorted(by_octave):
        medians = {layout: round(statistics.median(e), 3) for layout, e in sorted(by_octave[octave].items())}
        print(f"octave 2^{octave}: medians by layout {medians}", file=sys.stderr)
    print(json.dumps(points))
    print(json.dumps(attention_curves(system)))
    print(json.dumps(grouped_curves(system)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
