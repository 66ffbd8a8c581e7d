#!/usr/bin/env python3
"""The B200 preset's memory_kernel_efficiency of the MoE permute kernels, from SimuMax's measurement.

SimuMax (github.com/MooreThreads/SimuMax, commit 4dcaae5) timed Transformer Engine's
fused MoE permutation on the B200 machine its training runs were measured on
(simu_tools/efficency_test/test_ce_permute_efficiency.py): moe_permute_with_probs
followed by moe_unpermute ("fwd"), then the backward of both ("bwd"), at DeepSeek V2's
and V3's shapes (4096 tokens; hidden 5120, 160 experts, top-6; hidden 7168, 256
experts, top-8; capacity factor 1), CUDA events, median of 5 after 2 warm-ups. It
keeps one figure per direction in configs/system/b200_bf16_ceperm.json,
accelerator.bandwidth.permute_fwd / permute_bwd: efficient_factor such that

    sum of the two cases' times = sum of their bytes / (gbps x 2^30 x efficient_factor)
                                  + latency_us x 4 launches x 2 cases

with its own byte count, (t h + 3 P h) x 2 for the permutation and (3 P h + t h) x 2 for
the unpermutation, P = ceil(t k / E) x E the padded rows. That identity gives back the
measured total of each direction. trainsim counts 2 k t h x 2 bytes for each of
moe_permute and moe_unpermute, forward and backward (docs/model.md, "Mixture of experts",
"Measured permutation (B200)"), so the measured totals are these kernels' share of the
datasheet's 8 TB/s at trainsim's bytes:

    efficiency = trainsim bytes of both cases and directions / (measured time x 8e12 B/s)

Usage: scripts/simumax-b200-permute.py PATH/TO/b200_bf16_ceperm.json
Prints the measured totals and the efficiency.
"""
import json
import math
import sys

CASES = [  # test_ce_permute_efficiency.py's permute_cases
    {"tokens": 4096, "hidden": 5120, "experts": 160, "topk": 6},
    {"tokens": 4096, "hidden": 7168, "experts": 256, "topk": 8},
]
LAUNCHES = 4
DATASHEET = 8e12  # B/s, the B200 preset's memory_bandwidth


def simumax_bytes(c):
    t, h, e, k = c["tokens"], c["hidden"], c["experts"], c["topk"]
    padded = math.ceil(t * k / e) * e
    return ((t * h + 3 * padded * h) + (3 * padded * h + t * h)) * 2


def trainsim_bytes(c):
    return 2 * (2 * c["topk"] * c["tokens"] * c["hidden"] * 2)  # moe_permute + moe_unpermute


def main():
    system = json.load(open(sys.argv[1]))
    bandwidth = system["accelerator"]["bandwidth"]
    total_s = 0.0
    for direction in ("permute_fwd", "permute_bwd"):
        b = bandwidth[direction]
        seconds = sum(simumax_bytes(c) for c in CASES) / (b["gbps"] * 2**30 * b["efficient_factor"])
        seconds += b["latency_us"] * 1e-6 * LAUNCHES * len(CASES)
        print(f"{direction}: both cases {seconds * 1e3:.4f} ms measured")
        total_s += seconds
    ours = 2 * sum(trainsim_bytes(c) for c in CASES)
    print(f"trainsim bytes {ours:.6g}, efficiency {ours / (total_s * DATASHEET):.4f} of {DATASHEET:.0f} B/s")


if __name__ == "__main__":
    main()
