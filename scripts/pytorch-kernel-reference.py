#!/usr/bin/env python3
"""Measure the kernels PyTorch itself runs in an eager GPT-2 step under bf16 autocast,
and add them to a calibration profile (docs/calibration.md, "kernels"): `sdpa_forward`,
`sdpa_backward` (scaled_dot_product_attention, cuDNN or flash as PyTorch picks) and the
memory-bound `torch_*` kernels a PyTorch eager step is made of.

Why: a PyTorch eager step (scripts/pytorch-gpt-step.py; training.framework
"pytorch_eager") runs PyTorch's kernels, not ours. On the H200 our flash kernel ran
1.6-1.9x slower than PyTorch's attention, our layer norm slower than PyTorch's fp32
one, and PyTorch's casts, adds and reductions slower than a device copy, so pricing
the eager step by our kernels' rows is wrong class by class. With these rows each of
the step's kernels is priced by the measurement of the kernel that runs it.

  python3 scripts/pytorch-kernel-reference.py --profile PROFILE.json [--only sdpa|torch|host]

Rows (bytes: each input read once, each output written once, as the simulator counts
the eager op list, docs/model.md "PyTorch eager"; `shape` the sizes):
  sdpa_forward / sdpa_backward    causal bf16 attention on strided q, k, v views of one
                                  (b, s, 3, h, d) projection output, as the GPT program
                                  calls it; flops 4 b h s^2 d x 0.5, 2.5x backward
  torch_layernorm_forward         native_layer_norm, fp32 (R x C): 8RC + 8R + 8C
  torch_layernorm_backward        native_layer_norm_backward, input + gamma/beta
                                  gradients: 20RC + 16R + 12C
  torch_gelu_forward / _backward  tanh GELU in bf16: 4N / 6N
  torch_add                       fp32 + bf16 -> fp32: 10N
  torch_cast                      fp32 -> bf16 and bf16 -> fp32: 6N
  torch_fill                      zero_() of fp32: 4N
  torch_sum_rows                  bf16 (R x C).sum(0): 2RC + 2C
  torch_cat                       cat of three bf16 (R x C) along the columns: 12RC
  torch_log_softmax_forward       fp32 log_softmax over rows of V: 8RV
  torch_log_softmax_backward      _log_softmax_backward_data, fp32: 12RV
  torch_adamw                     AdamW(fused=True).step() over N fp32 parameters in
                                  GPT-2-sized tensors: 28N

It also measures how fast PyTorch's host thread issues those kernels ("host_dispatch":
docs/calibration.md): the GPT program of scripts/pytorch-gpt-step.py on tiny tensors
(12 layers, hidden 128, 2 x 64 tokens), where every kernel runs in a few microseconds,
timed on the host with no synchronization inside the step: the forward's host time
over its kernel count, the backward's (loss.backward() returns once the autograd
engine has issued every kernel) over its, and one optimizer.step(); kernels (and
memsets) counted with torch.profiler, phase by phase; medians of 20 steps.

Timing follows the harness: inputs rotate among enough copies to exceed twice the L2
cache (so every repetition reads device memory), 3 warm-ups (5 for attention), then the
median of 20 (30) repetitions, each between CUDA events queued behind a ~1 ms
torch.cuda._sleep, so the events time the kernels and not Python's dispatch of them
(which "host_dispatch" measures apart). Each part (sdpa, torch, host) is saved when it
ends; one that fails is reported and the others still run. The profile is rewritten
through a temporary file and a rename; rows of the same names are replaced.
"""
import argparse
import importlib.util
import itertools
import json
import os
import statistics
import sys
import time
import traceback

import torch
import torch.nn.functional as F

from cuda_event_timing import busy, median_seconds

TOKENS = 8192
VOCAB = 50304
# Elementwise sizes in elements: 2^8 (a bias) .. 2^30 (past T x V = 8192 x 50304, the
# logits' casts and fill) in steps of 4x.
ELEMENTS = [1 << e for e in range(8, 31, 2)]
# GPU cycles of torch.cuda._sleep queued before each timed repetition (about 1 ms at
# ~2 GHz): the GPU is still busy while the host queues the start event, the op and the
# end event, so the events time the kernels alone, not Python's dispatch before them
# (the harness's L2 flush does the same; host dispatch is measured apart, below).
BUSY_CYCLES = 2_000_000


def timed(fn, n, warmup=3, repeats=20, busy_cycles=BUSY_CYCLES):
    """Median seconds of fn(i) between CUDA events, i rotating over n input sets."""
    calls = itertools.count()
    return median_seconds(lambda: fn(next(calls) % n), warmup, repeats, busy(busy_cycles))


def copies_for(set_bytes, l2_bytes, repeats=20):
    """Input sets to rotate over: enough to exceed twice the L2 cache, no more than are used."""
    return min(repeats, max(1, -(-2 * l2_bytes // max(1, set_bytes))))


def row(name, shape, bytes_, seconds, flops=0.0, repeats=20):
    return {"name": name, "shape": shape, "bytes": float(bytes_), "flops": float(flops), "seconds": seconds,
            "repeats": repeats}


def sdpa_rows(l2):
    rows = []
    for d, heads in ((64, (12, 16, 20)), (128, (8, 16, 32))):
        for h in heads:
            for s in (512, 1024, 2048, 4096):
                b = TOKENS // s
                n = copies_for(5 * b * s * h * d * 2, l2, 30)
                qkvs = [torch.randn(b, s, 3, h, d, device="cuda", dtype=torch.bfloat16, requires_grad=True)
                        for _ in range(n)]
                # The output's gradient in the output's layout, (b, s, h, d) in memory, as
                # the program's y.transpose(1, 2).contiguous() hands it back.
                grads = [torch.randn(b, s, h, d, device="cuda", dtype=torch.bfloat16).transpose(1, 2)
                         for _ in range(n)]

                def views(i):
                    return tuple(qkvs[i][:, :, j].transpose(1, 2) for j in range(3))

                def forward(i):  # autograd on, as in training: the kernel keeps its statistics
                    F.scaled_dot_product_attention(*views(i), is_causal=True)

                graphs = []
                for i in range(n):
                    q, k, v = views(i)
                    graphs.append(((q, k, v), F.scaled_dot_product_attention(q, k, v, is_causal=True)))

                def backward(i):  # the attention's backward alone: dq, dk, dv, nothing accumulated
                    inputs, out = graphs[i]
                    torch.autograd.grad(out, inputs, grads[i], retain_graph=True)

                flops = 4.0 * b * h * s * s * d * 0.5
                nbytes = 4.0 * b * s * h * d * 2 + b * h * s * 4.0
                shape = {"batch": b, "heads": h, "seq": s, "head_dim": d}
                t_f = timed(forward, n, 5, 30)
                t_b = timed(backward, n, 5, 30, 4 * BUSY_CYCLES)
                rows.append(row("sdpa_forward", shape, nbytes, t_f, flops, 30))
                rows.append(row("sdpa_backward", shape, 2 * nbytes, t_b, 2.5 * flops, 30))
                print(f"sdpa b {b:2d} h {h:2d} s {s:4d} d {d:3d}: forward {flops / t_f / 1e12:6.1f} TFLOP/s, "
                      f"backward {2.5 * flops / t_b / 1e12:6.1f} TFLOP/s", flush=True)
                del qkvs, grads, graphs
    return rows


def report(rows):
    r = rows[-1]
    print(f"{r['name']:28s} {json.dumps(r['shape']):44s} {r['bytes'] / r['seconds'] / 1e9:8.0f} GB/s", flush=True)


def elementwise_rows(l2):
    rows = []
    bf16, fp32 = torch.bfloat16, torch.float32

    def measure(name, nbytes, shape, make, fn):
        n = copies_for(nbytes, l2)
        sets = [make() for _ in range(n)]
        rows.append(row(name, shape, nbytes, timed(lambda i: fn(*sets[i]), n)))
        report(rows)

    def randn(*size, dtype=fp32):
        return torch.randn(*size, device="cuda", dtype=dtype)

    for N in ELEMENTS:
        shape = {"elements": N}
        measure("torch_gelu_forward", 4 * N, shape, lambda: (randn(N, dtype=bf16),),
                lambda x: F.gelu(x, approximate="tanh"))
        measure("torch_gelu_backward", 6 * N, shape, lambda: (randn(N, dtype=bf16), randn(N, dtype=bf16)),
                lambda dy, x: torch.ops.aten.gelu_backward(dy, x, approximate="tanh"))
        measure("torch_add", 10 * N, shape, lambda: (randn(N), randn(N, dtype=bf16)), lambda a, b: a + b)
        measure("torch_cast", 6 * N, shape, lambda: (randn(N),), lambda x: x.to(bf16))
        measure("torch_cast", 6 * N, shape, lambda: (randn(N, dtype=bf16),), lambda x: x.to(fp32))
        measure("torch_fill", 4 * N, shape, lambda: (randn(N),), lambda x: x.zero_())
    for C in (768, 1024, 1280, 1600, 2048, 4096, 8192):
        for R in (TOKENS // 4, TOKENS):
            shape = {"rows": R, "cols": C}
            w, b = randn(C), randn(C)
            measure("torch_layernorm_forward", 8 * R * C + 8 * R + 8 * C, shape, lambda: (randn(R, C),),
                    lambda x: torch.native_layer_norm(x, [C], w, b, 1e-5))

            def ln_inputs():
                x = randn(R, C)
                _, mean, rstd = torch.native_layer_norm(x, [C], w, b, 1e-5)
                return randn(R, C), x, mean, rstd

            measure("torch_layernorm_backward", 20 * R * C + 16 * R + 12 * C, shape, ln_inputs,
                    lambda dy, x, mean, rstd: torch.ops.aten.native_layer_norm_backward(
                        dy, x, [C], mean, rstd, w, b, [True, True, True]))
    for C in (768, 1024, 1280, 2304, 3072, 3840, 4096, 5120, 6400):
        shape = {"rows": TOKENS, "cols": C}
        measure("torch_sum_rows", 2 * TOKENS * C + 2 * C, shape, lambda: (randn(TOKENS, C, dtype=bf16),),
                lambda g: g.sum(0))
        measure("torch_cat", 12 * TOKENS * C, shape,
                lambda: tuple(randn(TOKENS // 8, 8, C, dtype=bf16) for _ in range(3)),
                lambda a, b, c: torch.cat([a, b, c], dim=2))
    for R in (1024, 2048, 4096, TOKENS):
        shape = {"rows": R, "cols": VOCAB}
        measure("torch_log_softmax_forward", 8 * R * VOCAB, shape, lambda: (randn(R, VOCAB),),
                lambda x: torch.log_softmax(x, dim=-1))
        measure("torch_log_softmax_backward", 12 * R * VOCAB, shape,
                lambda: (randn(R, VOCAB), torch.log_softmax(randn(R, VOCAB), dim=-1)),
                lambda dy, y: torch.ops.aten._log_softmax_backward_data(dy, y, -1, fp32))
        torch.cuda.empty_cache()
    for h, layers in ((768, 12), (1024, 24), (1280, 36)):
        # GPT-2's parameter tensors (weights and biases of each block, embeddings).
        sizes = [50304 * h, 1024 * h, h, h] + layers * [h, h, 3 * h * h, 3 * h, h * h, h, h, h, 4 * h * h, 4 * h,
                                                       4 * h * h, h]
        params = [torch.zeros(n, device="cuda", requires_grad=True) for n in sizes]
        for p in params:
            p.grad = torch.randn_like(p)
        opt = torch.optim.AdamW(params, lr=1e-4, fused=True)
        total = sum(sizes)
        # opt.step() spends ~1 ms in Python over ~150 tensors before its kernels start.
        rows.append(row("torch_adamw", {"parameters": total}, 28 * total,
                        timed(lambda i: opt.step(), 1, busy_cycles=8 * BUSY_CYCLES)))
        report(rows)
        del params, opt
        torch.cuda.empty_cache()
    return rows


def host_dispatch():
    """Host seconds per issued kernel of the GPT step's forward and backward, and of one
    optimizer step, on tiny tensors (the program's own code path, not its sizes)."""
    spec = importlib.util.spec_from_file_location(
        "gpt_step", os.path.join(os.path.dirname(os.path.abspath(__file__)), "pytorch-gpt-step.py"))
    gpt_step = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gpt_step)
    layers, hidden, heads, vocab, seq, batch = 12, 128, 2, 512, 64, 2
    model = gpt_step.GPT(layers, hidden, heads, vocab, seq).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.1, fused=True)
    idx = torch.randint(0, vocab, (batch, seq + 1), device="cuda")
    x, y = idx[:, :-1].contiguous(), idx[:, 1:].contiguous()

    def forward():
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            return model(x, y)

    def phases():
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        loss = forward()
        t1 = time.perf_counter()
        loss.backward()
        t2 = time.perf_counter()
        opt.step()
        t3 = time.perf_counter()
        torch.cuda.synchronize()
        return t1 - t0, t2 - t1, t3 - t2

    for _ in range(5):
        phases()
    samples = [phases() for _ in range(20)]
    fwd, bwd, step = (statistics.median(s[i] for s in samples) for i in range(3))

    from torch.profiler import ProfilerActivity, profile

    def device_work(fn):
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            out = fn()
            torch.cuda.synchronize()
        n = sum(1 for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA)
        return n, out

    n_fwd, loss = device_work(forward)
    n_bwd, _ = device_work(loss.backward)
    n_opt, _ = device_work(opt.step)
    if min(n_fwd, n_bwd) == 0:
        raise RuntimeError(f"torch.profiler recorded {n_fwd} forward and {n_bwd} backward GPU events: "
                           "no kernel count, no host dispatch figure")
    result = {
        "framework": f"torch {torch.__version__}",
        "forward_s": fwd / n_fwd,
        "backward_s": bwd / n_bwd,
        "optimizer_s": step,
        "kernels": {"forward": n_fwd, "backward": n_bwd, "optimizer": n_opt},
        "model": f"scripts/pytorch-gpt-step.py GPT, {layers} layers, hidden {hidden}, {heads} heads, vocabulary "
                 f"{vocab}, {batch} x {seq} tokens, bf16 autocast, fused AdamW; host time per phase, median of "
                 f"{len(samples)} steps",
    }
    print(f"host dispatch: forward {fwd * 1e6:.0f} us over {n_fwd} kernels ({result['forward_s'] * 1e6:.2f} us "
          f"each), backward {bwd * 1e6:.0f} us over {n_bwd} ({result['backward_s'] * 1e6:.2f} us each), "
          f"optimizer step {step * 1e6:.0f} us ({n_opt} kernels)", flush=True)
    return result


def no_grad_rows(l2):
    with torch.no_grad():
        return elementwise_rows(l2)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--profile", required=True, help="calibration profile to add the rows to")
    ap.add_argument("--only", choices=("sdpa", "torch", "host"), help="measure only these rows (or host_dispatch)")
    a = ap.parse_args()
    with open(a.profile) as f:
        profile = json.load(f)
    l2 = getattr(torch.cuda.get_device_properties(0), "L2_cache_size", 64 << 20)
    profile.setdefault("versions", {})["torch"] = torch.__version__
    profile["versions"]["cudnn"] = str(torch.backends.cudnn.version())

    def save():  # after every part, so a failure later keeps what was measured
        tmp = a.profile + ".tmp"
        with open(tmp, "w") as f:
            json.dump(profile, f, indent=1)
            f.write("\n")
        os.replace(tmp, a.profile)

    def add(rows):
        names = {r["name"] for r in rows}
        profile["kernels"] = [k for k in profile.get("kernels", []) if k["name"] not in names] + rows
        save()
        print(f"added {len(rows)} rows ({', '.join(sorted(names))}) to {a.profile}", flush=True)

    def set_host():
        profile["host_dispatch"] = host_dispatch()
        save()

    # Each part on its own: a failure is printed and the others still run (and save).
    # Host dispatch last: its profiler sessions stay out of the kernel timings.
    failed = []
    parts = [("sdpa", lambda: add(sdpa_rows(l2))), ("torch", lambda: add(no_grad_rows(l2))), ("host", set_host)]
    for name, part in parts:
        if a.only not in (None, name):
            continue
        try:
            part()
        except Exception:  # noqa: BLE001 - report and go on to the next part
            failed.append(name)
            traceback.print_exc()
            torch.cuda.empty_cache()
    if failed:
        sys.exit(f"failed: {', '.join(failed)} (the other parts were saved)")


if __name__ == "__main__":
    main()
