#!/usr/bin/env python3
"""Measure the training step of a GPT-2-style decoder in PyTorch eager on one GPU.

The reference the simulator's single-GPU predictions are held against (issue 5,
docs/calibration.md "Checking a profile against PyTorch"): bf16 autocast over
fp32 master weights, scaled_dot_product_attention (causal), fused AdamW, no
dropout, tied embeddings, vocabulary 50257, one step = zero_grad + forward +
loss + backward + optimizer step.

Timing follows the device method: warm-up steps first (cuBLAS heuristics, the
allocator's pools, autocast caches), then each timed step between CUDA events on
fresh random tokens, median over the steps. A few extra steps run under the
PyTorch profiler to split the GPU time by kernel class.

  python3 scripts/pytorch-gpt-step.py --layers 12 --hidden 768 --heads 12 \
      --batch 8 --seq 1024 --steps 30 --out gpt2-124m.json [--run-out RUN.json]

--run-out also writes the run as a measured-run file (docs/validation.md, "Measured
run file") with "framework": "pytorch_eager", so `trainsim validate --measured RUN.json
--calibration PROFILE` holds the PyTorch eager prediction against it step, kernel class
and peak memory alike. Its kernel classes are the profiler's, "other_elementwise" filed
as "other".
"""
import argparse
import datetime
import json
import math
import os
import statistics
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


class Block(nn.Module):
    def __init__(self, h, heads):
        super().__init__()
        self.heads = heads
        self.ln_1 = nn.LayerNorm(h)
        self.c_attn = nn.Linear(h, 3 * h)
        self.c_proj = nn.Linear(h, h)
        self.ln_2 = nn.LayerNorm(h)
        self.c_fc = nn.Linear(h, 4 * h)
        self.mlp_proj = nn.Linear(4 * h, h)

    def forward(self, x):
        b, t, h = x.shape
        q, k, v = self.c_attn(self.ln_1(x)).split(h, dim=2)
        q = q.view(b, t, self.heads, h // self.heads).transpose(1, 2)
        k = k.view(b, t, self.heads, h // self.heads).transpose(1, 2)
        v = v.view(b, t, self.heads, h // self.heads).transpose(1, 2)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        y = y.transpose(1, 2).contiguous().view(b, t, h)
        x = x + self.c_proj(y)
        x = x + self.mlp_proj(F.gelu(self.c_fc(self.ln_2(x)), approximate="tanh"))
        return x


class GPT(nn.Module):
    def __init__(self, layers, h, heads, vocab, seq):
        super().__init__()
        self.wte = nn.Embedding(vocab, h)
        self.wpe = nn.Embedding(seq, h)
        self.blocks = nn.ModuleList(Block(h, heads) for _ in range(layers))
        self.ln_f = nn.LayerNorm(h)
        self.lm_head = nn.Linear(h, vocab, bias=False)
        self.lm_head.weight = self.wte.weight  # tied, as GPT-2

    def forward(self, idx, targets):
        t = idx.shape[1]
        x = self.wte(idx) + self.wpe(torch.arange(t, device=idx.device))
        for blk in self.blocks:
            x = blk(x)
        logits = self.lm_head(self.ln_f(x))
        return F.cross_entropy(logits.view(-1, logits.size(-1)).float(), targets.view(-1))


def kernel_class(name):
    # The same rules as trainsim's config::kernel_class_of_name (sim/config/kernel_class_names.h).
    n = name.lower()
    if "nccl" in n:
        return "all_reduce"
    if "flash" in n or "fmha" in n or "attention" in n or "sdpa" in n or "cudnn" in n and "mha" in n:
        return "attention"
    if "gemm" in n or "cutlass" in n or "sm90_xmma" in n or "nvjet" in n or "cublas" in n or "wgmma" in n:
        return "gemm"
    if "adam" in n or "multi_tensor" in n or "foreach" in n:
        return "optimizer"
    if "layer_norm" in n or "layernorm" in n or "rms_norm" in n or "rmsnorm" in n:
        return "layernorm"
    if "softmax" in n or "cross_entropy" in n or "nll" in n or "log_softmax" in n:
        return "softmax_cross_entropy"
    if "embedding" in n or "index" in n:
        return "embedding"
    if "gelu" in n:
        return "gelu"
    return "other_elementwise"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--layers", type=int, required=True)
    ap.add_argument("--hidden", type=int, required=True)
    ap.add_argument("--heads", type=int, required=True)
    ap.add_argument("--vocab", type=int, default=50257)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--seq", type=int, default=1024)
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--warmup", type=int, default=8)
    ap.add_argument("--out", required=True)
    ap.add_argument("--run-out", help="also write the run as a trainsim measured-run file")
    ap.add_argument("--top-kernels", type=int, default=0, help="print the N kernels with the most GPU time")
    ap.add_argument("--profile-trace", help="also record 4 steps with torch.profiler (CPU and CUDA, prof.step() "
                    "per step) and export the Chrome trace here: trainsim validate --measured's input "
                    "(docs/pytorch-traces.md)")
    a = ap.parse_args()

    torch.manual_seed(int(time.time()))
    dev = torch.device("cuda")
    torch.backends.cuda.matmul.allow_tf32 = True
    model = GPT(a.layers, a.hidden, a.heads, a.vocab, a.seq).to(dev)
    params = sum(p.numel() for p in model.parameters())
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.1, fused=True)

    def batch():
        idx = torch.randint(0, a.vocab, (a.batch, a.seq + 1), device=dev)
        return idx[:, :-1].contiguous(), idx[:, 1:].contiguous()

    def step(x, y):
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = model(x, y)
        loss.backward()
        opt.step()
        return loss

    for _ in range(a.warmup):
        step(*batch())
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()

    times = []
    losses = []
    for _ in range(a.steps):
        x, y = batch()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        loss = step(x, y)
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / 1e3)
        losses.append(float(loss.item()))  # after the step's end event: outside the timing
    peak = torch.cuda.max_memory_allocated()
    peak_reserved = torch.cuda.max_memory_reserved()  # the caching allocator's segments (issue 24)

    # Kernel classes over 3 profiled steps.
    classes = {}
    from torch.profiler import profile, ProfilerActivity
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(3):
            step(*batch())
        torch.cuda.synchronize()
    for ev in prof.key_averages():
        dt = getattr(ev, "device_time_total", None)
        if dt is None:
            dt = getattr(ev, "cuda_time_total", 0.0)
        if dt <= 0 or ev.key.startswith("ProfilerStep") or ev.key.startswith("aten::"):
            continue
        c = kernel_class(ev.key)
        classes[c] = classes.get(c, 0.0) + dt / 1e6 / 3.0

    if a.profile_trace:
        # One warm-up step, then 4 recorded steps: ProfilerStep#1..#4, three of them timed
        # to the next step's first kernel.
        from torch.profiler import schedule
        # The cycle's trace is exported when it ends (on_trace_ready): after the cycle the
        # profiler starts an empty one, which an export after the block would write.
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                     schedule=schedule(wait=0, warmup=1, active=4, repeat=1),
                     on_trace_ready=lambda p: p.export_chrome_trace(a.profile_trace)) as traced:
            for i in range(5):
                step(*batch())
                if i == 4:
                    torch.cuda.synchronize()  # the last step's kernels inside the cycle
                traced.step()

    if a.top_kernels:
        evs = sorted((ev for ev in prof.key_averages() if not ev.key.startswith(("aten::", "ProfilerStep"))),
                     key=lambda ev: -getattr(ev, "device_time_total", 0.0))
        for ev in evs[: a.top_kernels]:
            print(f"{getattr(ev, 'device_time_total', 0.0) / 3e3:9.3f} ms/step {ev.count // 3:5d}x  "
                  f"{kernel_class(ev.key):22s} {ev.key[:110]}")
    h, L, s, b, V = a.hidden, a.layers, a.seq, a.batch, a.vocab
    # Megatron-LM's model FLOPs per step (Narayanan et al. 2021, eq. 3 with s/(6h) term).
    model_flops = 72 * b * s * L * h * h * (1 + s / (6 * h) + V / (12 * h * L))
    med = statistics.median(times)
    res = {
        "framework": f"torch {torch.__version__}, CUDA {torch.version.cuda}",
        "device": torch.cuda.get_device_name(0),
        "config": vars(a) | {"parameters": params},
        "step_time_s": med,
        "step_time_min_s": min(times),
        "step_time_max_s": max(times),
        "step_times_s": times,
        "tokens_per_s": b * s / med,
        "model_tflops": model_flops / med / 1e12,
        "peak_memory_bytes": peak,
        "peak_reserved_bytes": peak_reserved,
        "final_loss": float(loss.item()),
        "ln_vocab": math.log(V),
        "kernel_class_s": classes,
    }
    with open(a.out, "w") as f:
        json.dump(res, f, indent=1)
    if a.run_out:
        write_run(a, res, times, losses)
    print(f"{a.layers}L h{h}: {params/1e6:.1f}M params, step {med*1e3:.2f} ms (min {min(times)*1e3:.2f}, "
          f"max {max(times)*1e3:.2f}), {model_flops/med/1e12:.0f} TFLOP/s, peak {peak/2**30:.2f} GiB (reserved {peak_reserved/2**30:.2f}); "
          + ", ".join(f"{k} {v*1e3:.1f} ms" for k, v in sorted(classes.items())))


def write_run(a, res, times, losses):
    """The run in trainsim's measured-run format (docs/validation.md), written atomically."""
    classes = {("other" if k == "other_elementwise" else k): v for k, v in res["kernel_class_s"].items()}
    run = {
        "format": "trainsim-measured-run",
        "version": 1,
        "tool": f"scripts/pytorch-gpt-step.py ({res['framework']})",
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "command": " ".join(sys.argv),
        "device": {"name": res["device"], "count": 1, "nodes": 1, "cuda": str(torch.version.cuda)},
        "model": {"num_layers": a.layers, "hidden_size": a.hidden, "num_attention_heads": a.heads,
                  "ffn_hidden_size": 4 * a.hidden, "seq_length": a.seq, "vocab_size": a.vocab,
                  "max_position_embeddings": a.seq, "tied_embeddings": True},
        "training": {"micro_batch_size": a.batch, "grad_accumulation_steps": 1, "data_parallel_size": 1,
                     "gpus_per_node": 1, "num_nodes": 1, "precision": "bf16", "optimizer": "adamw",
                     "attention": "flash", "dropout": 0.0, "framework": "pytorch_eager"},
        "warmup_steps": 0,  # the a.warmup warm-up steps ran before these and are not listed
        "steps": [{"step": i, "time_s": t, "loss": l, "tokens": a.batch * a.seq}
                  for i, (t, l) in enumerate(zip(times, losses))],
        "step_time_s": {"median": res["step_time_s"], "mean": statistics.mean(times), "min": min(times),
                        "max": max(times), "steps_timed": len(times)},
        "kernel_class_s": classes,
        "peak_memory_bytes": res["peak_memory_bytes"],
        "peak_memory_source": "torch.cuda.max_memory_allocated over the timed steps (the caching allocator's "
                              "allocations; no CUDA context, no cached free blocks)",
        "loss": {"initial": losses[0], "final": losses[-1]},
    }
    tmp = a.run_out + ".tmp"
    with open(tmp, "w") as f:
        json.dump(run, f, indent=1)
        f.write("\n")
    os.replace(tmp, a.run_out)


if __name__ == "__main__":
    main()
