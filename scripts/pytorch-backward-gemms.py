#!/usr/bin/env python3
"""PyTorch's own backward GEMMs of a linear layer, timed on the GPU at hand, to compare
with the harness's rows in the same layouts (trainsim-calibrate --shapes FILE, whose
entries carry "layout"; kernels/include/trainsim/kernels/gemm_layout.h):
  data_gradient   (m, n, k): dX[m x n] = dY[m x k] @ W[k x n], W contiguous (the layer's
                  weight [N x K]), as F.linear's backward computes grad_input
  weight_gradient (m, n, k): dW[m x n] = dY^T @ X with dY [k x m] and X [k x n]
                  contiguous, as F.linear's backward computes grad_weight
  forward         (m, n, k): Y[m x n] = X[m x k] @ W^T, W [n x k] contiguous (F.linear)
bf16 operands on fresh random data; like the harness, the L2 cache is flushed before
every repetition (a 256 MiB write outside the timed events); median of 30 after 5.
--warm also times each product without the flush, behind a GPU sleep instead (so the
events time the kernel, not Python's dispatch; its operands then sit in the L2): the two
bracket what a training step's GEMM meets.

  python3 scripts/pytorch-backward-gemms.py --shapes FILE --out pytorch-backward-gemms.json [--warm]
"""
import argparse
import json
import os

import torch

from cuda_event_timing import busy, median_seconds


def product(m, n, k, layout):
    dt = torch.bfloat16
    if layout == "forward":
        x, w = torch.randn(m, k, device="cuda", dtype=dt), torch.randn(n, k, device="cuda", dtype=dt)
        return lambda: torch.nn.functional.linear(x, w)
    if layout == "data_gradient":
        dy, w = torch.randn(m, k, device="cuda", dtype=dt), torch.randn(k, n, device="cuda", dtype=dt)
        return lambda: dy @ w
    if layout == "weight_gradient":
        dy, x = torch.randn(k, m, device="cuda", dtype=dt), torch.randn(k, n, device="cuda", dtype=dt)
        return lambda: dy.t() @ x
    raise SystemExit(f"unknown layout {layout!r}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shapes", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--warm", action="store_true", help="also time without the L2 flush, back to back")
    a = ap.parse_args()
    with open(a.shapes) as f:
        shapes = json.load(f)
    flush = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
    rows = []
    for s in shapes:
        m, n, k, layout = s["m"], s["n"], s["k"], s.get("layout", "forward")
        run = product(m, n, k, layout)
        t = median_seconds(run, 5, 30, before_each=flush.zero_)
        rows.append({"m": m, "n": n, "k": k, "layout": layout, "dtype": "bf16", "seconds": t,
                     "tflops": 2.0 * m * n * k / t / 1e12})
        warm = ""
        if a.warm:
            rows[-1]["warm_seconds"] = median_seconds(run, 5, 30, before_each=busy())
            warm = f"   warm {rows[-1]['warm_seconds'] * 1e6:9.2f} us"
        print(f"{m:6d} x {n:6d} x {k:6d} {layout:15s} {t * 1e6:9.2f} us {rows[-1]['tflops']:7.1f} TFLOP/s{warm}")
    out = {"device": torch.cuda.get_device_name(0), "torch": torch.__version__, "rows": rows}
    with open(a.out + ".tmp", "w") as f:
        json.dump(out, f, indent=1)
    os.replace(a.out + ".tmp", a.out)


if __name__ == "__main__":
    main()
