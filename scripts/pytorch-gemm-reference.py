#!/usr/bin/env python3
"""The GEMM reference table of ../shared/validation/PUBLIC_DATA.md, re-measured on the
GPU at hand with PyTorch (torch.matmul, one CUDA event pair per product, median of
50 after warm-up, random inputs), so the harness can be compared on the same card.
FP8 rows run torch._scaled_mm with per-tensor scales and a bf16 output, as Transformer
Engine's GEMMs do: "fp8" with the default accumulation, "fp8_fast" with use_fast_accum.

  python3 scripts/pytorch-gemm-reference.py --out pytorch-gemm.json
"""
import argparse
import json

import torch

from cuda_event_timing import median_seconds

SHAPES = [(8192, 8192, 8192, "bf16"), (4096, 4096, 4096, "bf16"), (2048, 2048, 2048, "bf16"),
          (16384, 3072, 768, "bf16"), (8192, 50304, 768, "bf16"), (4096, 16384, 4096, "bf16"),
          (8192, 8192, 8192, "tf32"), (8192, 8192, 8192, "fp8"), (8192, 8192, 8192, "fp8_fast"),
          (4096, 16384, 4096, "fp8"), (4096, 16384, 4096, "fp8_fast"), (16384, 3072, 768, "fp8_fast")]


def product(m, n, k, dtype):
    """A function running one m x n x k product of `dtype` on fresh random inputs."""
    if dtype.startswith("fp8"):
        x = torch.randn(m, k, device="cuda").to(torch.float8_e4m3fn)
        w = torch.randn(n, k, device="cuda").to(torch.float8_e4m3fn).t()  # column-major k x n
        one = torch.ones((), device="cuda")
        fast = dtype == "fp8_fast"
        return lambda: torch._scaled_mm(x, w, scale_a=one, scale_b=one, out_dtype=torch.bfloat16,
                                        use_fast_accum=fast)
    dt = torch.bfloat16 if dtype == "bf16" else torch.float32
    x = torch.randn(m, k, device="cuda", dtype=dt)
    w = torch.randn(k, n, device="cuda", dtype=dt)
    return lambda: torch.matmul(x, w)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = True
    rows = []
    for m, n, k, dtype in SHAPES:
        try:
            run = product(m, n, k, dtype)
            run()
        except (RuntimeError, AttributeError) as e:  # an older PyTorch without _scaled_mm, say
            print(f"{m:6d} x {n:6d} x {k:6d} {dtype}: not measured ({e})")
            continue
        t = median_seconds(run, 10, 50)
        rows.append({"m": m, "n": n, "k": k, "dtype": dtype, "seconds": t, "tflops": 2 * m * n * k / t / 1e12})
        print(f"{m:6d} x {n:6d} x {k:6d} {dtype}: {t*1e6:9.1f} us {2*m*n*k/t/1e12:7.1f} TFLOP/s")
    json.dump({"device": torch.cuda.get_device_name(0), "torch": torch.__version__, "rows": rows},
              open(a.out, "w"), indent=1)


if __name__ == "__main__":
    main()
