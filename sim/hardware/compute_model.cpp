#include "hardware/compute_model.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>

namespace trainsim::hw {

namespace {

bool by_flops(const EfficiencyPoint& a, const EfficiencyPoint& b) { return a.flops < b.flops; }

// Sorts a curve and checks its points; `what` names it in the message.
void check_curve(std::vector<EfficiencyPoint>& points, const std::string& what) {
  if (points.empty()) throw std::invalid_argument(what + " needs at least one point");
  std::sort(points.begin(), points.end(), by_flops);
  for (const auto& p : points)
    if (!(p.flops > 0.0) || !(p.efficiency > 0.0) || p.efficiency > 1.0)
      throw std::invalid_argument(what + " points need flops > 0 and 0 < efficiency <= 1");
}

}  // namespace

RooflineComputeModel::RooflineComputeModel(GpuSpec gpu) : gpu_(std::move(gpu)) {
  check_curve(gpu_.matmul_efficiency, gpu_.name + ": matmul_efficiency");
  if (!(gpu_.training_clock_ratio > 0.0 && gpu_.training_clock_ratio <= 1.0))
    throw std::invalid_argument(gpu_.name + ": training_clock_ratio must be in (0, 1]");
  if (!gpu_.matmul_efficiency_fp8.empty()) check_curve(gpu_.matmul_efficiency_fp8, gpu_.name + ": matmul_efficiency_fp8");
  if (!gpu_.matmul_efficiency_fp8_fast.empty())
    check_curve(gpu_.matmul_efficiency_fp8_fast, gpu_.name + ": matmul_efficiency_fp8_fast");
  if (gpu_.grouped_matmul_efficiency) {
    check_curve(gpu_.grouped_matmul_efficiency->forward, gpu_.name + ": grouped_matmul_efficiency forward");
    check_curve(gpu_.grouped_matmul_efficiency->data_gradient, gpu_.name + ": grouped_matmul_efficiency data_gradient");
    check_curve(gpu_.grouped_matmul_efficiency->weight_gradient,
                gpu_.name + ": grouped_matmul_efficiency weight_gradient");
  }
  for (AttentionEfficiency& a : gpu_.attention_efficiency) {
    std::string what = gpu_.name + ": attention_efficiency head_dim " + std::to_string(a.head_dim);
    if (a.value_head_dim != 0) what += " value_head_dim " + std::to_string(a.value_head_dim);
    check_curve(a.forward, what + " forward");
    check_curve(a.backward, what + " backward");
  }
}

const AttentionEfficiency* RooflineComputeModel::attention_curves(const KernelWork& work) const {
  const AttentionEfficiency* fallback = nullptr;
  for (const AttentionEfficiency& a : gpu_.attention_efficiency) {
    if (a.head_dim != work.head_dim ||
        value_width(a.head_dim, a.value_head_dim) != value_width(work.head_dim, work.value_head_dim))
      continue;
    if (a.kernel == work.attention_kernel) return &a;
    if (a.kernel == AttentionKernel::kDefault) fallback = &a;
  }
  return fallback;
}

double RooflineComputeModel::matmul_efficiency(double flops_per_gemm) const {
  return efficiency_at(gpu_.matmul_efficiency, flops_per_gemm);
}

int gemms_per_count(const KernelWork& work) {
  return work.backward && work.gradients == Gradients::kBoth ? 2 : 1;
}

// A backward matmul op of both gradients is two GEMMs as large as the forward one:
// each runs at the efficiency of its own FLOPs, F = flops / count / 2
// (docs/model.md, "Matmul efficiency").
double RooflineComputeModel::efficiency(const KernelWork& work, Precision precision) const {
  double flops = work.flops / work.count;
  if (work.kind == KernelClass::kMatmul) flops /= gemms_per_count(work);
  if (work.kind == KernelClass::kAttention && is_attention(work.kernel)) {
    if (const AttentionEfficiency* a = attention_curves(work))
      return gpu_.training_clock_ratio *
             efficiency_at(is_backward_attention(work.kernel) ? a->backward : a->forward, flops);
  }
  if (work.kind == KernelClass::kMatmul && precision == Precision::kFp8) {
    // Forward: fast accumulation; the data and weight gradients: split accumulation.
    if (!work.backward && !gpu_.matmul_efficiency_fp8_fast.empty())
      return efficiency_at(gpu_.matmul_efficiency_fp8_fast, flops);
    if (!gpu_.matmul_efficiency_fp8.empty()) return efficiency_at(gpu_.matmul_efficiency_fp8, flops);
  }
  return matmul_efficiency(flops);
}

// The grouped curves are bf16 measurements: an fp8 grouped GEMM takes them (at the
// fp8 peak) only on a GPU without measured fp8 GEMM curves; where it has them, those
// price each expert's GEMM (docs/model.md, "Grouped expert GEMMs").
bool RooflineComputeModel::prices_grouped(Precision precision) const {
  if (!gpu_.grouped_matmul_efficiency) return false;
  return precision != Precision::kFp8 || (gpu_.matmul_efficiency_fp8.empty() && gpu_.matmul_efficiency_fp8_fast.empty());
}

// One kernel over `count` experts' GEMMs of F = 2 m n k each: the forward at the
// forward curve; a backward op (its data and weight gradients, F each) at the
// curves of those GEMMs (docs/model.md, "Grouped expert GEMMs").
double RooflineComputeModel::grouped_matmul_seconds(const KernelWork& work, Precision precision) const {
  const GroupedMatmulEfficiency& g = *gpu_.grouped_matmul_efficiency;
  const double peak = gpu_.peak(precision) * gpu_.training_clock_ratio;
  if (!work.backward) return work.flops / (peak * efficiency_at(g.forward, work.flops / work.count));
  const int gemms = gemms_per_count(work);
  const double per_gemm = work.flops / work.count / gemms;
  const double part = work.flops / gemms;
  double t = 0.0;
  if (work.gradients != Gradients::kWeight) t += part / (peak * efficiency_at(g.data_gradient, per_gemm));
  if (work.gradients != Gradients::kData) t += part / (peak * efficiency_at(g.weight_gradient, per_gemm));
  return t;
}

Precision kernel_precision(const KernelWork& work, Precision recipe) {
  if (!quantized_gemms(recipe)) return recipe;
  if (work.kind == KernelClass::kAttention || (work.kind == KernelClass::kMatmul && !work.fp8)) return Precision::kBf16;
  return recipe;
}

double RooflineComputeModel::seconds(const KernelWork& work, Precision recipe) const {
  if (work.flops < 0.0 || work.bytes < 0.0 || work.count < 1)
    throw std::invalid_argument("kernel work must be non-negative");
  const Precision precision = kernel_precision(work, recipe);
  const auto measured = gpu_.memory_kernel_efficiency.find(work.kernel);
  const double memory_efficiency =
      measured != gpu_.memory_kernel_efficiency.end() ? measured->second : gpu_.memory_bandwidth_efficiency;
  const double memory_time = work.bytes / (gpu_.memory_bandwidth * memory_efficiency);
  double compute_time = 0.0;
  if (work.flops > 0.0) {
    if (work.kind == KernelClass::kMemoryBound) {
      // Elementwise arithmetic runs on the CUDA cores at the fp32 rate.
      const double rate = gpu_.supports(Precision::kFp32) ? gpu_.peak(Precision::kFp32) : gpu_.peak(precision);
      compute_time = work.flops / rate;
    } else if (work.kind == KernelClass::kMatmul && work.grouped && prices_grouped(precision)) {
      compute_time = grouped_matmul_seconds(work, precision);
    } else {
      compute_time = work.flops / (gpu_.peak(precision) * efficiency(work, precision));
    }
  }
  return std::max(compute_time, memory_time);
}

}  // namespace trainsim::hw
