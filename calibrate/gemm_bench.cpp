#include "gemm_bench.h"

#include <algorithm>
#include <cstdint>

#include "device_fill.h"
#include "trainsim/kernels/device_buffer.h"

namespace trainsim::calibrate {

namespace {
std::vector<long long> powers(long long lo, long long hi) {
  std::vector<long long> v;
  for (long long x = lo; x <= hi; x *= 2) v.push_back(x);
  return v;
}
}  // namespace

std::vector<GemmShape> gemm_grid(kernels::GemmDtype dtype, kernels::GemmLayout layout) {
  const bool slow = dtype == kernels::GemmDtype::kFp32 || dtype == kernels::GemmDtype::kTf32;
  const std::vector<long long> ms = powers(512, slow ? 8192 : 32768);
  const std::vector<long long> nk = powers(256, slow ? 8192 : 16384);
  std::vector<GemmShape> shapes;
  for (long long m : ms)
    for (long long n : nk)
      for (long long k : nk) {
        // fp32 on CUDA cores runs ~60 TFLOP/s: keep each shape under ~40 ms.
        if (dtype == kernels::GemmDtype::kFp32 && 2.0 * static_cast<double>(m * n * k) > 2.5e12) continue;
        shapes.push_back({m, n, k, layout});
      }
  return shapes;
}

void bench_gemms(BenchContext& ctx, kernels::GemmDtype dtype, const std::vector<GemmShape>& requested,
                 kernels::Fp8Scaling fp8_scaling) {
  // Hopper's fp8 GEMMs run in the forward (TN) layout only: Transformer Engine
  // transposes its fp8 operands (fp8_cast_transpose) and runs every GEMM TN.
  const std::vector<GemmShape> shapes = kernels::is_fp8(dtype) ? forward_only(requested) : requested;
  if (shapes.empty()) return;
  long long max_mk = 0, max_nk = 0, max_mn = 0;
  for (const GemmShape& s : shapes) {
    max_mk = std::max(max_mk, s.m * s.k);
    max_nk = std::max(max_nk, s.n * s.k);
    max_mn = std::max(max_mn, s.m * s.n);
  }
  const std::size_t in = kernels::input_element_bytes(dtype), out = kernels::output_element_bytes(dtype);
  kernels::DeviceBuffer<unsigned char> a(static_cast<std::size_t>(max_mk) * in);
  kernels::DeviceBuffer<unsigned char> w(static_cast<std::size_t>(max_nk) * in);
  kernels::DeviceBuffer<unsigned char> c(static_cast<std::size_t>(max_mn) * out);
  fill_random(a.get(), static_cast<std::size_t>(max_mk), dtype, 1u, ctx.stream);
  fill_random(w.get(), static_cast<std::size_t>(max_nk), dtype, 2u, ctx.stream);
  kernels::GemmRunner runner(std::size_t{64} << 20, fp8_scaling);

  std::fprintf(ctx.log,
               "# gemm %s: C[m x n] over k, cuBLASLt, in the layout named (forward: A[m x k] W^T), L2 flushed, "
               "median of repeats\n",
               kernels::to_string(dtype));
  std::fprintf(ctx.log, "#  dtype        m        n        k    time(us)   TFLOP/s  repeats  layout\n");
  TimingOptions opts;
  opts.flush_l2 = true;
  opts.target_seconds = 0.03;
  for (const GemmShape& s : shapes) {
    if (ctx.stopped()) return;
    const int m = static_cast<int>(s.m), n = static_cast<int>(s.n), k = static_cast<int>(s.k);
    // fp8_fast rows are fp8 GEMMs with "accumulation": "fast" (docs/calibration.md).
    const bool fast = dtype == kernels::GemmDtype::kFp8Fast;
    const char* layout = kernels::to_string(s.layout);
    const std::string key = std::string("gemm ") + kernels::to_string(dtype) + " " + std::to_string(s.m) + "x" +
                            std::to_string(s.n) + "x" + std::to_string(s.k) + " " + layout;
    const auto outcome = ctx.measure("gemm", key, [&] {
      nlohmann::json row{{"dtype", fast ? "fp8" : kernels::to_string(dtype)}, {"m", s.m}, {"n", s.n}, {"k", s.k}};
      if (fast) row["accumulation"] = "fast";
      if (s.layout != kernels::GemmLayout::kForward) row["layout"] = layout;
      const Timing t = ctx.timer->time(
          [&](int) { runner.run(dtype, m, n, k, a.get(), w.get(), c.get(), nullptr, kernels::GemmEpilogue::kNone,
                                ctx.stream, s.layout); },
          opts);
      const double tflops = 2.0 * static_cast<double>(s.m) * static_cast<double>(s.n) * static_cast<double>(s.k) /
                            t.median_s / 1e12;
      row["seconds"] = t.median_s;
      row["tflops"] = tflops;
      row["repeats"] = t.repeats;
      row["distribution_s"] = distribution_json(t);
      std::fprintf(ctx.log, "%8s %8lld %8lld %8lld %11.2f %9.1f %8d  %s\n", kernels::to_string(dtype), s.m, s.n,
                   s.k, t.median_s * 1e6, tflops, t.repeats, layout);
      return row;
    });
    // No algorithm for this case (fp8 alignment, say): recorded in "errors", and on to the next.
    if (outcome == MeasurementRunner::Outcome::kFailed)
      std::fprintf(ctx.log, "%8s %8lld %8lld %8lld   failed (%s): see \"errors\"\n", kernels::to_string(dtype), s.m,
                   s.n, s.k, layout);
  }
  ctx.profile->flush();
}

}  // namespace trainsim::calibrate
