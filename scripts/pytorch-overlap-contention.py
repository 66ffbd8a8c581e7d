#!/usr/bin/env python3
"""Compute kernels slowed by a communication kernel running beside them, on one GPU.

A collective overlapped with compute (FSDP's prefetched all-gathers, Megatron's
bucketed gradient reduce-scatters) runs as an NCCL kernel of C thread blocks (one per
channel, 512-640 threads each) on its own stream: its blocks hold C SMs for the
collective's whole time, and on NVLink they move data through HBM at the link's
rate. The compute kernels beside it lose those SMs and part of the bandwidth.

With one GPU there is no collective to run, so two stand-ins for its footprint run on a
second stream, each C blocks of 512 threads holding 100 KiB of shared memory (CuPy raw
kernels), so that no GEMM block shares their SMs, as NCCL's blocks leave none:
  hold  one warp per block spins on a flag in L2 (an NCCL kernel waiting on a slow network:
        SMs held, almost no HBM traffic)
  copy  the blocks copy a 1 GiB buffer over and over (an NCCL kernel moving NVLink
        traffic: SMs held and HBM bandwidth taken)
For C in 4, 8, 16, 24, 32, 48 and compute kernels of a transformer step (bf16 GEMMs of
Llama 3 8B's layer at 8192 tokens, 8192^3, a small GEMM, causal attention, an
elementwise add), each kernel's time is measured alone and with the stand-in running
(launched first on the other stream, the compute stream held back 50 us so the
stand-in's blocks are resident first, the stand-in sized to outlast the kernel), median
of 15 after 3 warm-ups. Reported: the slowdown t_with / t_alone - 1 per kernel, and the
copy stand-in's bandwidth alone and beside each kernel.

Usage: pytorch-overlap-contention.py --out FILE.json
"""
import argparse
import json
import os
import statistics
import sys
import time

import cupy
import torch
import torch.nn.functional as F

from cuda_event_timing import busy, median_seconds

BLOCKS = [4, 8, 16, 24, 32, 48]
COPY_BYTES = 1 << 30


SOURCE = r"""
extern "C" __global__ void hold(const volatile int* flag, int* out, long long iters) {
  extern __shared__ char smem[];
  int acc = 0;
  if (threadIdx.x < 32)  // one warp polls, as an NCCL block waits on its peer's flag
    for (long long i = 0; i < iters; ++i) acc += *flag;
  __syncthreads();       // the others stay resident at the barrier
  if (threadIdx.x == 0) out[blockIdx.x] = acc + smem[threadIdx.x];
}
extern "C" __global__ void copy(const int4* src, int4* dst, long long n, int passes) {
  extern __shared__ char smem[];
  const long long stride = (long long)gridDim.x * blockDim.x;
  for (int p = 0; p < passes; ++p)
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += stride) dst[i] = src[i];
  if (threadIdx.x == 0 && smem[0] == 123) dst[blockIdx.x] = src[0];
}
"""
THREADS = 512
SMEM = 100 * 1024  # with 512 threads: no GEMM block shares the SM, as with an NCCL block


class Standin:
    """C blocks of 512 threads and 100 KiB of shared memory each, on the current stream."""
    def __init__(self, kind, blocks):
        self.kind, self.blocks = kind, blocks
        self.kernel = cupy.RawKernel(SOURCE, kind)
        self.kernel.max_dynamic_shared_size_bytes = SMEM
        if kind == "copy":
            self.src = cupy.random.random(COPY_BYTES // 4, dtype=cupy.float32)
            self.dst = cupy.empty_like(self.src)
        else:
            self.flag = cupy.ones(1, dtype=cupy.int32)
            self.out = cupy.zeros(blocks, dtype=cupy.int32)
        self.launch(1)
        torch.cuda.synchronize()
        units = 2 if kind == "copy" else 50
        self.unit_ms = median_seconds(lambda: self.launch(units), 0, 3) * 1e3 / units

    def launch(self, units):
        with cupy.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream):
            if self.kind == "copy":
                args = (self.src, self.dst, cupy.int64(COPY_BYTES // 16), cupy.int32(units))
            else:
                args = (self.flag, self.out, cupy.int64(units * 1000))
            self.kernel((self.blocks,), (THREADS,), args, shared_mem=SMEM)

    def bandwidth_gbs(self, ms_per_unit):
        return 2.0 * COPY_BYTES / (ms_per_unit * 1e-3) / 1e9 if self.kind == "copy" else 0.0


def compute_kernels():
    def mm(m, n, k):
        a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
        return (f"gemm {m}x{n}x{k}", 2.0 * m * n * k, lambda: a @ b)

    q, k, v = (torch.randn(2, 32, 4096, 128, device="cuda", dtype=torch.bfloat16) for _ in range(3))
    x, y = (torch.randn(1 << 27, device="cuda", dtype=torch.bfloat16) for _ in range(2))
    return [mm(8192, 8192, 8192), mm(8192, 6144, 4096), mm(8192, 28672, 4096), mm(8192, 4096, 14336),
            mm(8192, 4096, 4096), mm(2048, 4096, 4096),
            ("sdpa causal b2 h32 s4096 d128", 2.0 * 2 * 32 * 4096 * 4096 * 128,
             lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True)),
            ("add 2^27 bf16", 0.0, lambda: torch.add(x, y))]


def timed(fn, repeats=15, warmup=3):
    """Median milliseconds of fn alone, behind a GPU sleep."""
    return median_seconds(fn, warmup, repeats, busy(1_000_000)) * 1e3


def timed_beside(fn, alone_ms, standin, side, repeats=15):
    """fn's time while the stand-in runs on `side`; and the stand-in's time per unit."""
    units = max(1, int(3.0 * alone_ms / standin.unit_ms) + 1)
    times, unit_times = [], []
    main = torch.cuda.current_stream()
    for i in range(repeats + 2):
        torch.cuda.synchronize()
        with torch.cuda.stream(side):
            s2, e2 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s2.record(side)
            standin.launch(units)
            e2.record(side)
        torch.cuda._sleep(100_000)  # ~50 us: the stand-in's blocks are resident first
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record(main)
        fn()
        e.record(main)
        torch.cuda.synchronize()
        if i >= 2:
            times.append(s.elapsed_time(e))
            unit_times.append(s2.elapsed_time(e2) / units)
    return statistics.median(times), statistics.median(unit_times), units


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    props = torch.cuda.get_device_properties(0)
    result = {"device": props.name, "sms": props.multi_processor_count, "torch": torch.__version__,
              "cupy": cupy.__version__, "date": time.strftime("%Y-%m-%d"), "standins": [], "rows": []}

    def save():
        tmp = a.out + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(result, f, indent=1)
        os.replace(tmp, a.out)

    kernels = compute_kernels()
    alone = {}
    for name, flops, fn in kernels:
        alone[name] = timed(fn)
        print(f"alone {name:34s} {alone[name] * 1e3:9.1f} us"
              + (f" {flops / alone[name] / 1e9:6.0f} TFLOP/s" if flops else ""), flush=True)
    side = torch.cuda.Stream()
    for kind in ("hold", "copy"):
        for blocks in BLOCKS:
            st = Standin(kind, blocks)
            result["standins"].append({"kind": kind, "blocks": blocks, "unit_ms": st.unit_ms,
                                       "bandwidth_gbs": st.bandwidth_gbs(st.unit_ms)})
            print(f"# {kind} {blocks} blocks: alone {st.bandwidth_gbs(st.unit_ms):6.0f} GB/s", flush=True)
            for name, flops, fn in kernels:
                with_ms, unit_ms, units = timed_beside(fn, alone[name], st, side)
                row = {"kind": kind, "blocks": blocks, "kernel": name, "flops": flops, "alone_ms": alone[name],
                       "beside_ms": with_ms, "slowdown": with_ms / alone[name] - 1.0,
                       "standin_gbs_beside": st.bandwidth_gbs(unit_ms), "standin_units": units}
                result["rows"].append(row)
                print(f"{kind} {blocks:2d} {name:34s} slowdown {row['slowdown'] * 100:+6.1f}%"
                      + (f"  copy {row['standin_gbs_beside']:5.0f} GB/s" if kind == "copy" else ""), flush=True)
            save()
            del st
            torch.cuda.empty_cache()
    save()
    return 0


if __name__ == "__main__":
    sys.exit(main())
