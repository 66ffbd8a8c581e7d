#!/usr/bin/env python3
"""A Llama 3 8B training step as torchtitan ran it (December 2024), on one GPU, for a
few layer counts: how much of torchtitan's measured step the compute alone takes.

torchtitan's Llama 3 8B rows in the public corpus (tests/validation/corpus,
torchtitan-llama3-8b-*) are predicted 23-34% too fast. On 8 GPUs with FSDP the step is
almost all compute, so this script times that compute without the distribution:
each layer as torchtitan's model code wrote it (its own RMSNorm computed in float,
rotary embeddings through complex numbers in float, GQA by repeating the key/value
heads, SDPA with is_causal on the flash backend, SwiGLU as w2(silu(w1 x) * w3 x)),
torchtitan's selective op activation checkpointing per block ("op": save the outputs
of mm, SDPA and max, except every second mm, recompute the rest), the output layer
and F.cross_entropy on float logits; parameters in bf16 (FSDP2's param_dtype), local
batch 2 x 8192 tokens. Eager, and with each block compiled (torch.compile(fullgraph)),
as the "compile" rows ran.

For each layer count: the median forward+backward time of 10 steps after 3 warm-ups
(CUDA events, fresh random tokens each step), the peak allocated memory, and one
profiled step's GPU kernel time by class (GEMM, attention, the rest). The time per
layer and the time outside the layers follow from two layer counts (a line through
them). No optimizer step: FSDP shards it 8 ways (trainsim prices it apart).

Usage: pytorch-llama-step.py --out FILE.json [--layers 2,4,8] [--compile]
       [--attention flash|cudnn|default] [--steps 10] [--tiny] (--tiny: a small model
       for checking the script on a CPU)
"""
import argparse
import collections
import json
import os
import statistics
import sys
import tempfile
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.utils.checkpoint import CheckpointPolicy, checkpoint, create_selective_checkpoint_contexts

from cuda_event_timing import busy, event_seconds

LLAMA3_8B = dict(dim=4096, heads=32, kv_heads=8, ffn=14336, vocab=128256, seq=8192, batch=2, theta=500000.0)
TINY = dict(dim=64, heads=4, kv_heads=2, ffn=128, vocab=256, seq=32, batch=2, theta=500000.0)


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        y = x.float()
        y = y * torch.rsqrt(y.pow(2).mean(-1, keepdim=True) + self.eps)
        return y.type_as(x) * self.weight


def rope_table(head_dim, seq, theta, device):
    freqs = 1.0 / (theta ** (torch.arange(0, head_dim, 2, device=device).float() / head_dim))
    angles = torch.outer(torch.arange(seq, device=device).float(), freqs)
    return torch.polar(torch.ones_like(angles), angles)  # complex64, seq x head_dim / 2


def rotate(x, table):
    xc = torch.view_as_complex(x.float().reshape(*x.shape[:-1], -1, 2))
    out = torch.view_as_real(xc * table.view(1, x.shape[1], 1, -1)).flatten(3)
    return out.type_as(x)


class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.heads, self.kv_heads, self.head_dim = c["heads"], c["kv_heads"], c["dim"] // c["heads"]
        d = c["dim"]
        self.attention_norm, self.ffn_norm = RMSNorm(d), RMSNorm(d)
        self.wq = nn.Linear(d, self.heads * self.head_dim, bias=False)
        self.wk = nn.Linear(d, self.kv_heads * self.head_dim, bias=False)
        self.wv = nn.Linear(d, self.kv_heads * self.head_dim, bias=False)
        self.wo = nn.Linear(self.heads * self.head_dim, d, bias=False)
        self.w1 = nn.Linear(d, c["ffn"], bias=False)
        self.w2 = nn.Linear(c["ffn"], d, bias=False)
        self.w3 = nn.Linear(d, c["ffn"], bias=False)

    def repeat_kv(self, x):
        b, s, h, d = x.shape
        n = self.heads // self.kv_heads
        return x[:, :, :, None, :].expand(b, s, h, n, d).reshape(b, s, h * n, d)

    def forward(self, x, table):
        b, s, _ = x.shape
        h = self.attention_norm(x)
        q = self.wq(h).view(b, s, self.heads, self.head_dim)
        k = self.wk(h).view(b, s, self.kv_heads, self.head_dim)
        v = self.wv(h).view(b, s, self.kv_heads, self.head_dim)
        q, k = rotate(q, table), rotate(k, table)
        k, v = self.repeat_kv(k), self.repeat_kv(v)
        y = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), is_causal=True)
        x = x + self.wo(y.transpose(1, 2).contiguous().view(b, s, -1))
        h = self.ffn_norm(x)
        return x + self.w2(F.silu(self.w1(h)) * self.w3(h))


# torchtitan's list of December 2024 (less reduce_scatter and abs, which a one-GPU bf16
# step does not run). It names the flash and efficient SDPA ops only; the cuDNN op is
# added so that --attention cudnn keeps the attention output as the flash run does (a
# variant: torchtitan then would have recomputed a cuDNN attention).
SAVE = {torch.ops.aten.mm.default, torch.ops.aten._scaled_dot_product_flash_attention.default,
        torch.ops.aten._scaled_dot_product_efficient_attention.default, torch.ops.aten.max.default}
if hasattr(torch.ops.aten, "_scaled_dot_product_cudnn_attention"):
    SAVE.add(torch.ops.aten._scaled_dot_product_cudnn_attention.default)


def op_sac_context():
    """Selective op checkpointing: keep the outputs of the SAVE ops except every second mm."""
    count = collections.defaultdict(int)

    def policy(ctx, func, *args, **kwargs):
        mode = "recompute" if ctx.is_recompute else "forward"
        if func == torch.ops.aten.mm.default:
            count[mode] += 1
        keep = func in SAVE and not (func == torch.ops.aten.mm.default and count[mode] % 2 == 0)
        return CheckpointPolicy.MUST_SAVE if keep else CheckpointPolicy.PREFER_RECOMPUTE

    return create_selective_checkpoint_contexts(policy)


class CheckpointedBlock(nn.Module):
    def __init__(self, block):
        super().__init__()
        self.block = block

    def forward(self, x, table):
        return checkpoint(self.block, x, table, use_reentrant=False, context_fn=op_sac_context)


class Model(nn.Module):
    def __init__(self, c, layers, compile_blocks):
        super().__init__()
        self.tok_embeddings = nn.Embedding(c["vocab"], c["dim"])
        blocks = []
        for _ in range(layers):
            blk = CheckpointedBlock(Block(c))
            blocks.append(torch.compile(blk, fullgraph=True) if compile_blocks else blk)
        self.layers = nn.ModuleList(blocks)
        self.norm = RMSNorm(c["dim"])
        self.output = nn.Linear(c["dim"], c["vocab"], bias=False)

    def forward(self, tokens, table):
        x = self.tok_embeddings(tokens)
        for layer in self.layers:
            x = layer(x, table)
        return self.output(self.norm(x))


def kernel_class(name):
    n = name.lower()
    if "flash" in n or "fmha" in n or "attention" in n or "cudnn" in n:
        return "attention"
    if "gemm" in n or "xmma" in n or "nvjet" in n or "cutlass" in n or "wgmma" in n:
        return "gemm"
    return "other"


def profile_step(step, device):
    """GPU kernel time (s) by class over one step, from the profiler's trace."""
    if device.type != "cuda":
        return {}
    acts = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
    with torch.profiler.profile(activities=acts) as prof:
        step()
        torch.cuda.synchronize()
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "trace.json")
        prof.export_chrome_trace(path)
        with open(path, encoding="utf-8") as f:
            events = json.load(f)["traceEvents"]
    by_class, kernels = collections.defaultdict(float), 0
    for e in events:
        if e.get("cat") == "kernel":
            by_class[kernel_class(e["name"])] += e["dur"] * 1e-6
            kernels += 1
    return {"kernel_seconds": dict(by_class), "kernels": kernels}


def run(c, layers, compile_blocks, steps, device, backend):
    """One configuration's row; its model and buffers are freed even when it fails."""
    torch.manual_seed(0)
    dtype = torch.bfloat16 if device.type == "cuda" else torch.float32
    model = Model(c, layers, compile_blocks).to(device=device, dtype=dtype)
    try:
        return measure(model, c, layers, compile_blocks, steps, device, backend)
    finally:
        del model
        if device.type == "cuda":
            torch.cuda.empty_cache()


def measure(model, c, layers, compile_blocks, steps, device, backend):
    table = rope_table(c["dim"] // c["heads"], c["seq"], c["theta"], device)

    def step():
        tokens = torch.randint(0, c["vocab"], (c["batch"], c["seq"] + 1), device=device)
        with sdpa_kernel(backend):
            logits = model(tokens[:, :-1], table)
            loss = F.cross_entropy(logits.flatten(0, 1).float(), tokens[:, 1:].flatten(0, 1))
            loss.backward()
        for p in model.parameters():
            p.grad = None
        return loss

    t0 = time.time()
    for _ in range(3):
        loss = step()
    warm_s = time.time() - t0
    if device.type == "cuda":
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
    if device.type == "cuda":
        times = event_seconds(step, 0, steps, busy(1_000_000))
    else:  # --tiny on a CPU: a check of the script, not a measurement
        times = []
        for _ in range(steps):
            t = time.time()
            step()
            times.append(time.time() - t)
    row = {"layers": layers, "compile": compile_blocks, "median_s": statistics.median(times), "times_s": times,
           "warmup_s": warm_s, "loss": loss.item()}
    if device.type == "cuda":
        row["peak_allocated_bytes"] = torch.cuda.max_memory_allocated()
        row["peak_reserved_bytes"] = torch.cuda.max_memory_reserved()  # the allocator's segments (issue 24)
    row.update(profile_step(step, device))
    return row


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--layers", default="2,4,8")
    ap.add_argument("--compile", action="store_true", help="also with each block compiled")
    ap.add_argument("--attention", choices=["flash", "cudnn", "default"], default="flash")
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--tiny", action="store_true")
    a = ap.parse_args()
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    c = TINY if a.tiny else LLAMA3_8B
    backend = {"flash": SDPBackend.FLASH_ATTENTION, "cudnn": SDPBackend.CUDNN_ATTENTION,
               "default": [SDPBackend.CUDNN_ATTENTION, SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION,
                           SDPBackend.MATH]}[a.attention]
    if device.type != "cuda":
        backend = SDPBackend.MATH
    result = {"device": torch.cuda.get_device_name(0) if device.type == "cuda" else "cpu",
              "torch": torch.__version__, "date": time.strftime("%Y-%m-%d"), "config": c,
              "attention": a.attention, "rows": []}

    def save():
        tmp = a.out + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(result, f, indent=1)
        os.replace(tmp, a.out)

    layer_counts = [int(x) for x in a.layers.split(",")]
    failures = 0
    for compile_blocks in ([False, True] if a.compile else [False]):
        for layers in layer_counts:
            try:
                row = run(c, layers, compile_blocks, a.steps, device, backend)
            except Exception as exc:  # one configuration's failure (out of memory, a compile error) ends only it
                failures += 1
                result["rows"].append({"layers": layers, "compile": compile_blocks, "error": repr(exc)[:2000]})
                print(f"layers {layers} compile {compile_blocks}: FAILED {exc!r}"[:600], flush=True)
                save()
                continue
            result["rows"].append(row)
            ks = row.get("kernel_seconds", {})
            print(f"layers {layers:2d} compile {str(compile_blocks):5s}: {row['median_s'] * 1e3:8.1f} ms"
                  f"  peak {row.get('peak_allocated_bytes', 0) / 2**30:5.1f} GiB"
                  f" (reserved {row.get('peak_reserved_bytes', 0) / 2**30:5.1f})  kernels {row.get('kernels', 0)}"
                  + "".join(f"  {k} {v * 1e3:.1f} ms" for k, v in sorted(ks.items()))
                  + f"  (warm-up {row['warmup_s']:.0f} s, loss {row['loss']:.3f})", flush=True)
            save()
        ok = [r for r in result["rows"] if r["compile"] == compile_blocks and "median_s" in r]
        if len(ok) >= 2:
            lo, hi = ok[0], ok[-1]
            per_layer = (hi["median_s"] - lo["median_s"]) / (hi["layers"] - lo["layers"])
            outside = lo["median_s"] - lo["layers"] * per_layer
            result.setdefault("fits", []).append({"compile": compile_blocks, "per_layer_s": per_layer,
                                                  "outside_layers_s": outside})
            print(f"compile {compile_blocks}: {per_layer * 1e3:.2f} ms per layer, {outside * 1e3:.1f} ms outside"
                  f" the layers; 32 layers: {(outside + 32 * per_layer) * 1e3:.0f} ms", flush=True)
            save()
    save()
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
