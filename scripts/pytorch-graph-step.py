#!/usr/bin/env python3
"""The GPT-2 training step of pytorch-gpt-step.py eager and captured whole as one CUDA
graph, on one GPU, in one process: what the host's launches cost a step, and what a
kernel costs inside a graph (issue 24, CUDA graphs).

Both run the same model, data shape and optimizer (fused AdamW with capturable=True,
which a captured step needs: its step counter lives on the GPU), bf16 autocast without
its weight-cast cache (a cache cannot be captured; the casts run every step in both).
The graph is captured as PyTorch's documentation captures a whole network
("CUDA Graphs", whole-network capture): three warm-up steps on a side stream, the
gradients set to None, then forward, loss, backward and optimizer step captured once
and replayed on fresh tokens copied into the static input.

For each: the median step between CUDA events over --steps steps after --warmup, and
over 3 profiled steps the kernels a step runs and the sum of their durations. Then

    gap per kernel = (step time - kernel time) / kernels

eager (the host's launch and dispatch exposed between kernels) and graphed (what a
graph's launch of one node to the next costs). Also the peak allocated and reserved
memory of each (the graph keeps its own memory pool).

  python3 scripts/pytorch-graph-step.py --layers 12 --hidden 768 --heads 12 --out g.json
"""
import argparse
import importlib.util
import json
import os
import pathlib
import statistics
import time

import torch

from cuda_event_timing import event_seconds


def load_gpt_model():
    """The model of pytorch-gpt-step.py (its file name has dashes: loaded by path)."""
    path = pathlib.Path(__file__).with_name("pytorch-gpt-step.py")
    spec = importlib.util.spec_from_file_location("pytorch_gpt_step", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.GPT


def measured(run, steps):
    """The median step of `run` between CUDA events, its spread, the peak allocated and
    reserved memory over those steps, and the kernels a step runs (kernels_of)."""
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    t = event_seconds(run, 0, steps)
    r = {"median_s": statistics.median(t), "min_s": min(t), "max_s": max(t), "times_s": t,
         "peak_allocated_bytes": torch.cuda.max_memory_allocated(),
         "peak_reserved_bytes": torch.cuda.max_memory_reserved()}
    r["kernels"], r["kernel_s"] = kernels_of(run)
    r["gap_per_kernel_s"] = (r["median_s"] - r["kernel_s"]) / r["kernels"] if r["kernels"] else None
    return r


def kernels_of(run, steps=3):
    """Kernels a step runs and their summed duration (s), a step's mean over `steps`."""
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(steps):
            run()
        torch.cuda.synchronize()
    count, total_us = 0, 0.0
    for ev in prof.events():
        if getattr(ev, "device_type", None) == torch.autograd.DeviceType.CUDA and ev.name and \
                not ev.name.startswith(("ProfilerStep", "aten::")) and "Memcpy" not in ev.name and \
                "Memset" not in ev.name:
            count += 1
            total_us += ev.time_range.elapsed_us()
    return count / steps, total_us * 1e-6 / steps


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--layers", type=int, required=True)
    ap.add_argument("--hidden", type=int, required=True)
    ap.add_argument("--heads", type=int, required=True)
    ap.add_argument("--vocab", type=int, default=50304)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--seq", type=int, default=1024)
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--warmup", type=int, default=8)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()

    torch.manual_seed(int(time.time()))
    dev = torch.device("cuda")
    torch.backends.cuda.matmul.allow_tf32 = True
    model = load_gpt_model()(a.layers, a.hidden, a.heads, a.vocab, a.seq).to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.1, fused=True, capturable=True)
    x = torch.empty((a.batch, a.seq), dtype=torch.long, device=dev)
    y = torch.empty_like(x)

    def new_tokens():
        idx = torch.randint(0, a.vocab, (a.batch, a.seq + 1), device=dev)
        x.copy_(idx[:, :-1])
        y.copy_(idx[:, 1:])

    def body():
        with torch.autocast("cuda", dtype=torch.bfloat16, cache_enabled=False):
            loss = model(x, y)
        loss.backward()
        opt.step()
        return loss

    def eager():
        new_tokens()
        opt.zero_grad(set_to_none=True)
        body()

    res = {"device": torch.cuda.get_device_name(0), "torch": torch.__version__, "cuda": torch.version.cuda,
           "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "config": vars(a),
           "parameters": sum(p.numel() for p in model.parameters())}

    # Eager first, on the default stream.
    for _ in range(a.warmup):
        eager()
    res["eager"] = measured(eager, a.steps)

    # Whole-step capture (PyTorch "CUDA Graphs": warm up on a side stream, grads None).
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            eager()
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    opt.zero_grad(set_to_none=True)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        static_loss = body()
    torch.cuda.synchronize()

    def graphed():
        new_tokens()
        graph.replay()

    for _ in range(a.warmup):
        graphed()
    res["graph"] = measured(graphed, a.steps)
    res["graph"]["loss"] = float(static_loss.item())

    tmp = a.out + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(res, f, indent=1)
    os.replace(tmp, a.out)
    e, g = res["eager"], res["graph"]
    gap = lambda r: f"{r['gap_per_kernel_s'] * 1e6:.2f} us" if r["gap_per_kernel_s"] is not None else "n/a"
    print(f"{a.layers}L h{a.hidden}: eager {e['median_s'] * 1e3:.2f} ms ({e['kernels']:.0f} kernels, "
          f"{e['kernel_s'] * 1e3:.2f} ms in kernels, gap {gap(e)}); graph {g['median_s'] * 1e3:.2f} ms "
          f"({g['kernels']:.0f} kernels, {g['kernel_s'] * 1e3:.2f} ms, gap {gap(g)}); reserved/allocated "
          f"eager {e['peak_reserved_bytes'] / e['peak_allocated_bytes']:.3f}, graph "
          f"{g['peak_reserved_bytes'] / g['peak_allocated_bytes']:.3f}; loss {g['loss']:.3f}")


if __name__ == "__main__":
    main()
