#!/usr/bin/env python3
"""Grouped expert GEMMs in their three stages, measured on the GPU at hand with PyTorch.

An MoE layer's c local experts each run a linear layer on their t routed tokens. As one
grouped kernel (torch._grouped_mm, CUTLASS on Hopper, what torchtitan and NeMo AutoModel
run), a training step runs it three times per linear layer:
  forward          Y  = X W^T       (c t x k) by (c, n, k) -> (c t x n)   offsets on rows
  data gradient    dX = dY W        (c t x n) by (c, n, k) -> (c t x k)   offsets on rows
  weight gradient  dW = dY^T X      (n x c t) by (c t x k) -> (c, n, k)   offsets on the
                                                                         contracting dim
each c GEMMs of F = 2 t n k: the calls PyTorch's own backward of _grouped_mm makes,
timed one by one. trainsim's grouped_matmul_efficiency curves (docs/model.md, "Grouped
expert GEMMs") are functions of one expert's F per stage: scripts/grouped-gemm-curves.py
turns this file's rows into them.

Shapes: the expert GEMMs (gate+up fused, n = 2 f, k = h; down, n = h, k = f) of the MoE
models in the validation corpus, c local experts as their recipes place them, t from 128
to 8192 tokens per expert with c t <= 131072 routed rows. bf16 operands and output,
fp32 accumulation. Optionally the forward in fp8 (e4m3, rowwise scales,
torch._scaled_grouped_mm) where this PyTorch has it.

Checked first: every stage against a float64 per-expert reference (relative L2 error).
Timing: CUDA events around the call, the GPU kept busy by torch.cuda._sleep before each
repeat (events time the kernel, not Python's dispatch), median of 20 after 3 warm-ups,
operand sets rotated so that a repeat does not run from the L2.

Usage: pytorch-grouped-gemm-stages.py --out FILE.json [--peak TFLOPS]
"""
import argparse
import itertools
import json
import os
import statistics
import sys
import time

import torch

from cuda_event_timing import busy, event_seconds

# (model, hidden h, expert ffn f, local experts c): Qwen3-30B-A3B (128 experts, EP 8),
# Qwen3-235B-A22B (128, EP 8), gpt-oss-120b (128, EP 8) and -20b (32, EP 8), DeepSeek-V3
# (256, EP 8), Mixtral 8x7B (8, EP 1).
MODELS = [("qwen3-30b-a3b", 2048, 768, 16), ("qwen3-235b-a22b", 4096, 1536, 16),
          ("gpt-oss-120b", 2880, 2880, 16), ("gpt-oss-20b", 2880, 2880, 4),
          ("deepseek-v3", 7168, 2048, 32), ("mixtral-8x7b", 4096, 14336, 8)]
TOKENS = [128, 256, 512, 1024, 2048, 4096, 8192]
MAX_ROWS = 131072
BUSY_CYCLES = 2_000_000
SET_BYTES = 2 * 50 * 2**20  # rotate until the sets exceed twice an H100's 50 MiB L2


def timed(fn, n, warmup=3, repeats=20):
    """Median seconds of fn(i), i rotating over n operand sets, and the spread (stddev / mean)."""
    calls = itertools.count()
    times = event_seconds(lambda: fn(next(calls) % n), warmup, repeats, busy(BUSY_CYCLES))
    return statistics.median(times), statistics.pstdev(times) / statistics.mean(times)


def rnd(*shape):
    return torch.randn(*shape, device="cuda", dtype=torch.bfloat16).mul_(0.1)


def offsets(c, t):
    return torch.arange(1, c + 1, device="cuda", dtype=torch.int32) * t


def stages(x, w, dy, offs):
    """The three calls of a grouped linear layer's step: forward, data and weight gradient."""
    return {"forward": lambda: torch._grouped_mm(x, w.transpose(-2, -1), offs=offs),
            "data_gradient": lambda: torch._grouped_mm(dy, w, offs=offs),
            "weight_gradient": lambda: torch._grouped_mm(dy.t(), x, offs=offs)}


def check(h, n, c, t):
    """Relative L2 error of each stage against per-expert float64 products."""
    x, w, dy, offs = rnd(c * t, h), rnd(c, n, h), rnd(c * t, n), offsets(c, t)
    xs = x.double().split(t)
    dys = dy.double().split(t)
    ref = {"forward": torch.cat([xs[e] @ w[e].double().t() for e in range(c)]),
           "data_gradient": torch.cat([dys[e] @ w[e].double() for e in range(c)]),
           "weight_gradient": torch.stack([dys[e].t() @ xs[e] for e in range(c)])}
    errors = {}
    for name, fn in stages(x, w, dy, offs).items():
        out = fn().double()
        errors[name] = float((out - ref[name]).norm() / ref[name].norm())
    return errors


def measure(h, n, c, t, peak):
    set_bytes = 2 * (c * t * h + c * n * h + c * t * n)
    sets = max(1, min(4, -(-SET_BYTES // set_bytes)))
    operands = [(rnd(c * t, h), rnd(c, n, h), rnd(c * t, n)) for _ in range(sets)]
    offs = offsets(c, t)
    calls = [stages(x, w, dy, offs) for x, w, dy in operands]
    flops = 2.0 * t * n * h
    rows = []
    for name in ("forward", "data_gradient", "weight_gradient"):
        seconds, cv = timed(lambda i: calls[i][name](), sets)
        rows.append({"stage": name, "seconds": seconds, "cv": round(cv, 4), "flops_per_gemm": flops,
                     "tflops": c * flops / seconds / 1e12, "efficiency": c * flops / seconds / peak})
    del operands, calls
    return rows


def measure_fp8_forward(h, n, c, t, peak_fp8):
    """The forward in fp8: e4m3 operands, rowwise float32 scales, bf16 out."""
    e4m3 = torch.float8_e4m3fn
    x = rnd(c * t, h).to(e4m3)
    w = rnd(c, n, h).to(e4m3)
    sa = torch.ones(c * t, device="cuda", dtype=torch.float32)
    sb = torch.ones(c, n, device="cuda", dtype=torch.float32)
    offs = offsets(c, t)

    def call(_):
        return torch._scaled_grouped_mm(x, w.transpose(-2, -1), sa, sb, offs=offs, out_dtype=torch.bfloat16)

    ref = torch.cat([x[e * t:(e + 1) * t].double() @ w[e].double().t() for e in range(c)])
    error = float((call(0).double() - ref).norm() / ref.norm())
    seconds, cv = timed(call, 1)
    flops = 2.0 * t * n * h
    return {"stage": "forward_fp8_rowwise", "seconds": seconds, "cv": round(cv, 4), "flops_per_gemm": flops,
            "tflops": c * flops / seconds / 1e12, "efficiency": c * flops / seconds / peak_fp8, "check": error}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--peak", type=float, default=989.0, help="bf16 dense peak, TFLOP/s (H100 SXM: 989)")
    ap.add_argument("--fp8", action="store_true", help="also the fp8 rowwise forward")
    a = ap.parse_args()
    if not torch.cuda.is_available() or not hasattr(torch, "_grouped_mm"):
        print("no GPU, or no torch._grouped_mm in this PyTorch")
        return 1
    peak = a.peak * 1e12
    props = torch.cuda.get_device_properties(0)
    result = {"device": props.name, "torch": torch.__version__, "cuda": torch.version.cuda, "peak_bf16": peak,
              "date": time.strftime("%Y-%m-%d"), "checks": [], "cases": []}

    def save():
        tmp = a.out + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(result, f, indent=1)
        os.replace(tmp, a.out)

    torch.manual_seed(0)
    for model, h, f, c in MODELS:
        for gemm, n, k in (("up", 2 * f, h), ("down", h, f)):
            errors = check(k, n, c, 256)
            result["checks"].append({"model": model, "gemm": gemm, "errors": errors})
            print(f"# {model} {gemm}: relative L2 vs float64 " +
                  " ".join(f"{s} {e:.1e}" for s, e in errors.items()), flush=True)
            if not all(e < 1e-2 for e in errors.values()):
                print("FAILED: a stage does not compute its product")
                save()
                return 1
            for t in TOKENS:
                if c * t > MAX_ROWS:
                    continue
                case = {"model": model, "gemm": gemm, "experts": c, "tokens_per_expert": t, "n": n, "k": k}
                try:
                    case["stages"] = measure(k, n, c, t, peak)
                    if a.fp8 and hasattr(torch, "_scaled_grouped_mm"):
                        try:
                            case["stages"].append(measure_fp8_forward(k, n, c, t, 2 * peak))
                        except Exception as e:  # an fp8 layout this build lacks: say so, keep bf16
                            case["fp8_error"] = str(e).splitlines()[0][:200]
                except torch.cuda.OutOfMemoryError:
                    case["error"] = "out of memory"
                    torch.cuda.empty_cache()
                result["cases"].append(case)
                print(f"{model:16s} {gemm:4s} c {c:2d} t {t:5d}: " +
                      " ".join(f"{s['stage']} {s['tflops']:5.0f}" for s in case.get("stages", [])) +
                      (f"  fp8: {case['fp8_error']}" if "fp8_error" in case else ""), flush=True)
                save()
    save()
    return 0


if __name__ == "__main__":
    sys.exit(main())
