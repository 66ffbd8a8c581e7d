#!/usr/bin/env python3
"""An MoE layer's expert work measured with PyTorch on the GPU at hand, against what
trainsim assumes (docs/model.md, 'MoE'): grouped expert GEMMs priced as `c` separate
GEMMs of one expert's shape, and the token permute/unpermute as memory traffic.

For each case (an expert shape and tokens per expert), bf16:
  - the c local experts as c separate torch.mm (T x K) @ (K x N), one after another
    (Megatron-Core's SequentialMLP), eager and replayed from a CUDA graph (kernel time);
  - the `c` local experts' grouped GEMM, torch._grouped_mm (as torchtitan's MoE
    runs them), forward and forward+backward;
  - the permute (index_select of the k t routed rows) and unpermute (index_add_),
    as achieved bytes per second (rows read + written).
Checked first: the grouped GEMM against per-expert torch.mm (relative L2 error).
Timing: CUDA events around each call, median of repeats after warm-up, operands
rotated among 4 sets so that repeats do not run from the L2.

Usage: pytorch-moe-reference.py --out FILE.json
"""
import argparse
import json
import os
import statistics
import sys

import torch

# (name, hidden h, expert ffn f, local experts c): Qwen3-30B-A3B (h 2048, f 768,
# 128 experts, EP 8: 16 local) and gpt-oss-120b (h 2880, f 2880, 128 experts, EP 8).
SHAPES = [("qwen3-30b-a3b ep8", 2048, 768, 16), ("gpt-oss-120b ep8", 2880, 2880, 16)]
TOKENS = [256, 512, 1024, 2048, 4096]
ROTATE = 4


def median_ms(fn, warmup=5, repeats=30):
    for i in range(warmup):
        fn(i)
    torch.cuda.synchronize()
    times = []
    for i in range(repeats):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn(i)
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def rnd(*shape, grad=False):
    return torch.randn(*shape, device="cuda", dtype=torch.bfloat16).mul_(0.1).requires_grad_(grad)


def grouped(x, w_t, offs):
    return torch._grouped_mm(x, w_t, offs=offs)


def check_grouped(h, n, c, t):
    x = rnd(c * t, h)
    w = rnd(c, n, h)
    offs = torch.arange(1, c + 1, device="cuda", dtype=torch.int32) * t
    y = grouped(x, w.transpose(-2, -1), offs).float()
    ref = torch.cat([x[e * t:(e + 1) * t].double() @ w[e].double().t() for e in range(c)]).float()
    return float((y - ref).norm() / ref.norm())


def gemm_case(h, n, c, t, backward):
    """Times one expert's (t x h) @ (h x n) and the c experts' grouped GEMM."""
    xs = [rnd(t, h, grad=backward) for _ in range(ROTATE)]
    ws = [rnd(n, h, grad=backward) for _ in range(ROTATE)]
    gx = [rnd(c * t, h, grad=backward) for _ in range(ROTATE)]
    gw = [rnd(c, n, h, grad=backward) for _ in range(ROTATE)]
    dy1, dyc = rnd(t, n), rnd(c * t, n)
    offs = torch.arange(1, c + 1, device="cuda", dtype=torch.int32) * t

    # autograd.grad, not backward(): no accumulation into .grad between repeats.
    # The c experts one after another (Megatron-Core's SequentialMLP), each its own
    # GEMM of one expert's shape: what trainsim prices (c x one GEMM).
    def one(i):
        for e in range(c):
            x, w = xs[(i + e) % ROTATE], ws[(i + e) % ROTATE]
            y = x @ w.t()
            if backward:
                torch.autograd.grad(y, (x, w), dy1)

    def group(i):
        x, w = gx[i % ROTATE], gw[i % ROTATE]
        y = grouped(x, w.transpose(-2, -1), offs)
        if backward:
            torch.autograd.grad(y, (x, w), dyc)

    if backward:
        return median_ms(one), median_ms(group), None
    # Forward only: also the c GEMMs replayed from a CUDA graph, which takes the host's
    # launches out (the kernels' own time).
    graph = torch.cuda.CUDAGraph()
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        one(0)
    torch.cuda.current_stream().wait_stream(stream)
    with torch.cuda.graph(graph):
        one(0)
    return median_ms(one), median_ms(group), median_ms(lambda i: graph.replay())


def permute_case(h, t_rows, k):
    """index_select of k t routed rows and their index_add_ back (bytes read + written)."""
    t = t_rows
    xs = [rnd(t, h) for _ in range(ROTATE)]
    idx = torch.randint(0, t, (k * t,), device="cuda")
    perm = torch.sort(idx).values  # token ids in expert order (here: sorted)
    ys = [rnd(k * t, h) for _ in range(ROTATE)]
    outs = [torch.zeros(t, h, device="cuda", dtype=torch.bfloat16) for _ in range(ROTATE)]
    sel = median_ms(lambda i: xs[i % ROTATE].index_select(0, perm))
    add = median_ms(lambda i: outs[i % ROTATE].index_add_(0, perm, ys[i % ROTATE]))
    moved = 2 * k * t * h * 2  # k t rows of h bf16 values read and written
    return sel, add, moved


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    if not torch.cuda.is_available() or not hasattr(torch, "_grouped_mm"):
        print("no GPU, or no torch._grouped_mm in this PyTorch")
        return 1
    props = torch.cuda.get_device_properties(0)
    result = {"device": props.name, "torch": torch.__version__, "dtype": "bf16", "cases": [], "permute": []}
    for name, h, f, c in SHAPES:
        for label, n, kk in (("up (gate+up fused)", 2 * f, h), ("down", h, f)):
            err = check_grouped(kk, n, c, 256)
            print(f"# {name} {label}: grouped vs per-expert fp64 reference, relative L2 {err:.2e}")
            if not err < 2e-2:
                print("FAILED: grouped GEMM check")
                return 1
            for t in TOKENS:
                row = {"model": name, "gemm": label, "experts": c, "tokens_per_expert": t, "m": t, "n": n, "k": kk}
                try:
                    f1, fg, f1_graph = gemm_case(kk, n, c, t, False)
                    b1, bg, _ = gemm_case(kk, n, c, t, True)
                except RuntimeError as e:
                    row["error"] = str(e)[:200]
                    result["cases"].append(row)
                    print(f"{name} {label} t={t}: {row['error']}")
                    continue
                flops = 2.0 * t * n * kk
                row.update({"sequential_forward_ms": f1, "sequential_forward_graph_ms": f1_graph,
                            "grouped_forward_ms": fg, "sequential_fwd_bwd_ms": b1, "grouped_fwd_bwd_ms": bg,
                            "sequential_graph_tflops": c * flops / f1_graph / 1e9,
                            "grouped_forward_tflops": c * flops / fg / 1e9,
                            "grouped_over_sequential_graph_forward": fg / f1_graph,
                            "grouped_over_sequential_fwd_bwd": bg / b1})
                result["cases"].append(row)
                print(f"{name:18s} {label:18s} t={t:5d} (m,n,k)=({t},{n},{kk}) x{c}: sequential eager "
                      f"{f1 * 1e3:8.1f} us, graph {f1_graph * 1e3:8.1f} us {row['sequential_graph_tflops']:6.1f} TF/s; "
                      f"grouped {fg * 1e3:8.1f} us {row['grouped_forward_tflops']:6.1f} TF/s; grouped/graph "
                      f"{row['grouped_over_sequential_graph_forward']:.3f}; fwd+bwd grouped/eager "
                      f"{row['grouped_over_sequential_fwd_bwd']:.3f}", flush=True)
    for name, h, _, _ in SHAPES:
        for t, k in ((4096, 8), (8192, 8), (16384, 4)):
            sel, add, moved = permute_case(h, t, k)
            row = {"model": name, "hidden": h, "tokens": t, "topk": k, "bytes": moved, "index_select_ms": sel,
                   "index_add_ms": add, "index_select_gbps": moved / sel / 1e6, "index_add_gbps": moved / add / 1e6}
            result["permute"].append(row)
            print(f"permute {name:18s} t={t:5d} k={k}: index_select {sel * 1e3:8.1f} us "
                  f"{row['index_select_gbps']:7.0f} GB/s  index_add_ {add * 1e3:8.1f} us {row['index_add_gbps']:7.0f} GB/s",
                  flush=True)
    with open(a.out + ".tmp", "w") as fh:
        json.dump(result, fh, indent=1)
    os.replace(a.out + ".tmp", a.out)
    print("wrote " + a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
