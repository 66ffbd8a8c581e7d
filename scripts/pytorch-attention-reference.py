#!/usr/bin/env python3
"""Measure PyTorch's causal scaled_dot_product_attention (the cuDNN or flash kernel
PyTorch picks on this GPU) forward and backward, and add the rows to a calibration
profile as the kernels `sdpa_forward` and `sdpa_backward` (docs/calibration.md).

Why: a PyTorch eager step (scripts/pytorch-gpt-step.py) runs PyTorch's attention, not
ours; on the H200 our flash kernel runs 1.6-1.9x slower than PyTorch's, so pricing the
eager step's attention with our kernel's rows would be wrong by that much.

  python3 scripts/pytorch-attention-reference.py --profile PROFILE.json

Shapes: the GPT program's layout (q, k, v are transposed views of one (b, s, 3, h, d)
projection output, bf16), causal, at head dims 64 and 128 over 8192 tokens split into
b sequences of s, for several head counts. Timing follows the harness: inputs rotate
among enough copies to exceed twice the L2 cache, 5 warm-ups, then the median of 30
repetitions, each between CUDA events; the backward is torch.autograd.grad of the output
against q, k and v (the attention backward alone, no gradient accumulation). FLOPs and
bytes are counted as for our attention rows: 4 b h s^2 d x 0.5 forward (causal), 2.5
times that backward; bytes Q, K, V, O (2 bytes each) and the fp32 log-sum-exp forward,
twice that backward. The profile is rewritten through a temporary file and a rename.
"""
import argparse
import json
import os
import statistics

import torch
import torch.nn.functional as F

TOKENS = 8192
SEQS = (512, 1024, 2048, 4096)
HEADS = {64: (12, 16, 20), 128: (8, 16, 32)}
REPEATS = 30
WARMUP = 5


def timed(fn, n):
    """Median seconds of fn(i) between CUDA events, i rotating over the n input sets."""
    for i in range(WARMUP):
        fn(i % n)
    times = []
    for i in range(REPEATS):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn(i % n)
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1e-3)
    return statistics.median(times)


def measure(b, h, s, d, l2_bytes):
    one_set = 5 * b * s * h * d * 2  # q, k, v (one projection output), the output and its gradient, bf16
    copies = max(2, -(-2 * l2_bytes // one_set))
    qkvs, grads = [], []
    for _ in range(copies):
        # As in the GPT program: q, k, v are transposed views of one projection output.
        qkvs.append(torch.randn(b, s, 3, h, d, device="cuda", dtype=torch.bfloat16, requires_grad=True))
        grads.append(torch.randn(b, h, s, d, device="cuda", dtype=torch.bfloat16))

    def views(i):
        return tuple(qkvs[i][:, :, j].transpose(1, 2) for j in range(3))

    def forward(i):  # with autograd on, as in training (the kernel keeps its statistics)
        F.scaled_dot_product_attention(*views(i), is_causal=True)

    graphs = []
    for i in range(copies):
        q, k, v = views(i)
        graphs.append(((q, k, v), F.scaled_dot_product_attention(q, k, v, is_causal=True)))

    def backward(i):  # the attention's backward alone: gradients of q, k, v, nothing accumulated
        inputs, out = graphs[i]
        torch.autograd.grad(out, inputs, grads[i], retain_graph=True)

    fwd_flops = 4.0 * b * h * s * s * d * 0.5
    fwd_bytes = 4.0 * b * s * h * d * 2 + b * h * s * 4.0
    shape = {"batch": b, "heads": h, "seq": s, "head_dim": d}
    t_fwd = timed(forward, copies)
    t_bwd = timed(backward, copies)
    return [
        {"name": "sdpa_forward", "shape": shape, "bytes": fwd_bytes, "flops": fwd_flops, "seconds": t_fwd,
         "repeats": REPEATS},
        {"name": "sdpa_backward", "shape": shape, "bytes": 2 * fwd_bytes, "flops": 2.5 * fwd_flops,
         "seconds": t_bwd, "repeats": REPEATS},
    ]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--profile", required=True, help="calibration profile to add the rows to")
    a = ap.parse_args()
    with open(a.profile) as f:
        profile = json.load(f)
    props = torch.cuda.get_device_properties(0)
    l2 = getattr(props, "L2_cache_size", 64 << 20)
    rows = []
    for d, heads in HEADS.items():
        for h in heads:
            for s in SEQS:
                rows += measure(TOKENS // s, h, s, d, l2)
                fwd, bwd = rows[-2], rows[-1]
                print(f"b {TOKENS // s:2d} h {h:2d} s {s:4d} d {d:3d}: forward {fwd['seconds'] * 1e6:8.1f} us "
                      f"{fwd['flops'] / fwd['seconds'] / 1e12:6.1f} TFLOP/s, backward {bwd['seconds'] * 1e6:8.1f} us "
                      f"{bwd['flops'] / bwd['seconds'] / 1e12:6.1f} TFLOP/s", flush=True)
    profile["kernels"] = [k for k in profile.get("kernels", []) if not k["name"].startswith("sdpa_")] + rows
    profile.setdefault("versions", {})["torch"] = torch.__version__
    profile["versions"]["cudnn"] = str(torch.backends.cudnn.version())
    tmp = a.profile + ".tmp"
    with open(tmp, "w") as f:
        json.dump(profile, f, indent=1)
        f.write("\n")
    os.replace(tmp, a.profile)
    print(f"added {len(rows)} sdpa rows to {a.profile}")


if __name__ == "__main__":
    main()
