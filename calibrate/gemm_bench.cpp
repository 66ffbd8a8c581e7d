#include "gemm_bench.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "device_fill.h"
#include "trainsim/kernels/cuda_check.h"
#include "trainsim/kernels/device_buffer.h"

namespace trainsim::calibrate {

namespace {
std::vector<long long> powers(long long lo, long long hi) {
  std::vector<long long> v;
  for (long long x = lo; x <= hi; x *= 2) v.push_back(x);
  return v;
}

// One GEMM operand (A, W or C), grown inside the measurement of the shape that
// needs it, so that a shape too large for the device fails alone (an out-of-memory
// error row) instead of every shape of its dtype. The first growth asks for what
// the largest shape needs (`target`), so a grid that fits is allocated once, as
// before; when that does not fit, each shape gets what it needs.
class GemmOperand {
 public:
  GemmOperand(kernels::GemmDtype dtype, std::size_t element_bytes, std::uint32_t seed, std::size_t target_elements,
              cudaStream_t stream)
      : dtype_(dtype), element_bytes_(element_bytes), seed_(seed), target_(target_elements), stream_(stream) {}

  // Makes room for `elements` (random values for an input, seed > 0); throws the
  // CUDA error when the device cannot hold them.
  unsigned char* fit(std::size_t elements) {
    if (buffer_.size() >= elements * element_bytes_) return buffer_.get();
    buffer_ = {};  // the old one's memory counts toward the new one
    if (target_ > elements) {
      try {
        allocate(target_);
        return buffer_.get();
      } catch (const kernels::CudaError&) {
        (void)cudaGetLastError();  // out of memory is not sticky: clear it, ask for less
      }
    }
    allocate(elements);
    return buffer_.get();
  }

 private:
  void allocate(std::size_t elements) {
    buffer_ = kernels::DeviceBuffer<unsigned char>(elements * element_bytes_);
    if (seed_ > 0) fill_random(buffer_.get(), elements, dtype_, seed_, stream_);
  }

  kernels::GemmDtype dtype_;
  std::size_t element_bytes_;
  std::uint32_t seed_;  // 0: an output, left as it is
  std::size_t target_;
  cudaStream_t stream_;
  kernels::DeviceBuffer<unsigned char> buffer_;
};
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
  auto elements = [](long long v) { return static_cast<std::size_t>(v); };
  GemmOperand a(dtype, in, 1u, elements(max_mk), ctx.stream);
  GemmOperand w(dtype, in, 2u, elements(max_nk), ctx.stream);
  GemmOperand c(dtype, out, 0u, elements(max_mn), ctx.stream);
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
      const void* a_data = a.fit(elements(s.m * s.k));
      const void* w_data = w.fit(elements(s.n * s.k));
      void* c_data = c.fit(elements(s.m * s.n));
      const Timing t = ctx.timer->time(
          [&](int) { runner.run(dtype, m, n, k, a_data, w_data, c_data, nullptr, kernels::GemmEpilogue::kNone,
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
    // No algorithm for this case (fp8 alignment, say) or no room for its operands:
    // recorded in "errors", and on to the next.
    if (outcome == MeasurementRunner::Outcome::kFailed)
      std::fprintf(ctx.log, "%8s %8lld %8lld %8lld   failed (%s): see \"errors\"\n", kernels::to_string(dtype), s.m,
                   s.n, s.k, layout);
  }
  ctx.profile->flush();
}

}  // namespace trainsim::calibrate
