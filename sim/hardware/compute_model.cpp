#include "hardware/compute_model.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <utility>

namespace trainsim::hw {

RooflineComputeModel::RooflineComputeModel(GpuSpec gpu) : gpu_(std::move(gpu)) {
  if (gpu_.matmul_efficiency.empty())
    throw std::invalid_argument(gpu_.name + ": matmul_efficiency needs at least one point");
  std::sort(gpu_.matmul_efficiency.begin(), gpu_.matmul_efficiency.end(),
            [](const EfficiencyPoint& a, const EfficiencyPoint& b) { return a.flops < b.flops; });
  for (const auto& p : gpu_.matmul_efficiency)
    if (!(p.flops > 0.0) || !(p.efficiency > 0.0) || p.efficiency > 1.0)
      throw std::invalid_argument(gpu_.name + ": matmul_efficiency points need flops > 0 and 0 < efficiency <= 1");
}

double RooflineComputeModel::matmul_efficiency(double flops_per_gemm) const {
  const auto& pts = gpu_.matmul_efficiency;
  if (pts.size() == 1) return pts.front().efficiency;
  if (flops_per_gemm >= pts.back().flops) return pts.back().efficiency;
  const double x = std::log(std::max(flops_per_gemm, 1.0));
  if (flops_per_gemm <= pts.front().flops) {
    // Small GEMMs fill fewer SMs: extend the first segment's log-log slope.
    const double slope = std::log(pts[1].efficiency / pts[0].efficiency) /
                         std::log(pts[1].flops / pts[0].flops);
    const double eff = pts[0].efficiency * std::exp(slope * (x - std::log(pts[0].flops)));
    return std::clamp(eff, 1e-6, pts[0].efficiency);
  }
  const auto hi = std::upper_bound(pts.begin(), pts.end(), flops_per_gemm,
                                   [](double f, const EfficiencyPoint& p) { return f < p.flops; });
  const auto lo = std::prev(hi);
  const double t = (x - std::log(lo->flops)) / (std::log(hi->flops) - std::log(lo->flops));
  return lo->efficiency + t * (hi->efficiency - lo->efficiency);
}

Precision kernel_precision(const KernelWork& work, Precision recipe) {
  if (recipe != Precision::kFp8) return recipe;
  if (work.kind == KernelClass::kAttention || (work.kind == KernelClass::kMatmul && !work.fp8)) return Precision::kBf16;
  return recipe;
}

double RooflineComputeModel::seconds(const KernelWork& work, Precision recipe) const {
  if (work.flops < 0.0 || work.bytes < 0.0 || work.count < 1)
    throw std::invalid_argument("kernel work must be non-negative");
  const Precision precision = kernel_precision(work, recipe);
  const double memory_time = work.bytes / (gpu_.memory_bandwidth * gpu_.memory_bandwidth_efficiency);
  double compute_time = 0.0;
  if (work.flops > 0.0) {
    if (work.kind == KernelClass::kMemoryBound) {
      // Elementwise arithmetic runs on the CUDA cores at the fp32 rate.
      const double rate = gpu_.supports(Precision::kFp32) ? gpu_.peak(Precision::kFp32) : gpu_.peak(precision);
      compute_time = work.flops / rate;
    } else {
      const double eff = matmul_efficiency(work.flops / work.count);
      compute_time = work.flops / (gpu_.peak(precision) * eff);
    }
  }
  return std::max(compute_time, memory_time);
}

}  // namespace trainsim::hw
