#!/usr/bin/env python3
"""Causal flash attention at long sequences, measured on the GPU at hand with PyTorch.

The H100 preset's attention_efficiency (scenarios/hardware/H100-SXM5-80GB.json) was
measured at sequences 512-4096 (scripts/pytorch-kernel-reference.py) and held flat
beyond; the long-sequence runs of the corpus (32K-1M tokens, context parallel) run the
kernel at a rank's share of the sequence, 8K to 128K. This measures causal bf16
scaled_dot_product_attention forward and backward (dq, dk, dv) from 4K to 128K tokens,
one sequence per call, at head dims 64 and 128, on the cuDNN backend (what Transformer
Engine's fused attention runs on Hopper, and what PyTorch picked for the H100 preset's
rows) and, for comparison, the flash (FlashAttention-2) backend.

FLOPs as trainsim counts flash attention (docs/model.md, "Attention efficiency"):
forward 2 b h s^2 d (the causal half), backward 2.5 x that.
Timing: CUDA events, the GPU kept busy by torch.cuda._sleep before each repeat, median
of a few repeats after one warm-up (a 128K backward takes about a second).
The rows are in the form of a calibration profile's kernel measurements ("sdpa_forward",
"sdpa_backward" with batch, heads, seq, head_dim), so scripts/profile-attention-curve.py
reads them with the earlier ones.

Usage: pytorch-long-attention.py --out FILE.json
"""
import argparse
import json
import os
import sys
import time

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

from cuda_event_timing import busy, median_seconds

BUSY_CYCLES = 2_000_000
SEQS = [4096, 8192, 16384, 32768, 65536, 131072]
CASES = [(128, 8), (128, 32), (64, 16)]  # (head_dim, heads)
BACKENDS = {"cudnn": SDPBackend.CUDNN_ATTENTION, "flash": SDPBackend.FLASH_ATTENTION}


def case_rows(backend, d, h, s, peak):
    b = 1
    qkv = torch.randn(b, s, 3, h, d, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    grad = torch.randn(b, s, h, d, device="cuda", dtype=torch.bfloat16).transpose(1, 2)
    q, k, v = (qkv[:, :, j].transpose(1, 2) for j in range(3))
    flops = 2.0 * b * h * s * s * d
    repeats = 3 if flops > 2e13 else 10
    with sdpa_kernel([BACKENDS[backend]]):
        out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        t_f = median_seconds(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True), 1, repeats, busy(BUSY_CYCLES))
        t_b = median_seconds(lambda: torch.autograd.grad(out, (q, k, v), grad, retain_graph=True), 1, repeats,
                             busy(BUSY_CYCLES))
    nbytes = 4.0 * b * s * h * d * 2 + b * h * s * 4.0
    shape = {"batch": b, "heads": h, "seq": s, "head_dim": d}
    rows = [{"name": "sdpa_forward", "backend": backend, "shape": shape, "bytes": nbytes, "flops": flops,
             "seconds": t_f, "repeats": repeats, "efficiency": flops / t_f / peak},
            {"name": "sdpa_backward", "backend": backend, "shape": shape, "bytes": 2 * nbytes, "flops": 2.5 * flops,
             "seconds": t_b, "repeats": repeats, "efficiency": 2.5 * flops / t_b / peak}]
    del qkv, grad, out
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--peak", type=float, default=989.0, help="bf16 dense peak, TFLOP/s (H100 SXM: 989)")
    a = ap.parse_args()
    if not torch.cuda.is_available():
        print("no GPU")
        return 1
    peak = a.peak * 1e12
    result = {"device": torch.cuda.get_device_properties(0).name, "torch": torch.__version__,
              "cudnn": torch.backends.cudnn.version(), "date": time.strftime("%Y-%m-%d"), "kernels": []}

    def save():
        tmp = a.out + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(result, f, indent=1)
        os.replace(tmp, a.out)

    for backend in ("cudnn", "flash"):
        for d, h in CASES:
            if backend == "flash" and h != 32:
                continue
            for s in SEQS:
                try:
                    rows = case_rows(backend, d, h, s, peak)
                except Exception as e:  # a backend that refuses the shape: say so, go on
                    print(f"{backend} d {d} h {h} s {s}: {str(e).splitlines()[0][:160]}", flush=True)
                    torch.cuda.empty_cache()
                    continue
                result["kernels"].extend(rows)
                save()
                print(f"{backend:5s} d {d:3d} h {h:2d} s {s:6d}: forward {rows[0]['efficiency']:.3f} "
                      f"({rows[0]['seconds'] * 1e3:8.2f} ms), backward {rows[1]['efficiency']:.3f} "
                      f"({rows[1]['seconds'] * 1e3:8.2f} ms)", flush=True)
    save()
    return 0


if __name__ == "__main__":
    sys.exit(main())
