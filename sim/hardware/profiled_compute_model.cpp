#include "hardware/profiled_compute_model.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <stdexcept>
#include <utility>
#include <vector>

#include "hardware/profile_efficiency.h"

namespace trainsim::hw {

namespace {

// Why an attention kernel found no rows of its head dimension: a profile measures
// kernels whose values are as wide as their queries, which latent attention's are not.
std::string no_head_dim(std::string_view kernel, const KernelWork& work) {
  const int values = value_width(work.head_dim, work.value_head_dim);
  if (values != work.head_dim)
    return fmt::format("{}: no rows with head_dim {} and values {} wide (the profile measures equal widths)", kernel,
                       work.head_dim, values);
  return fmt::format("{}: no rows with head_dim {}", kernel, work.head_dim);
}

constexpr std::array<Precision, kNumPrecisions> kPrecisions{Precision::kFp32, Precision::kTf32, Precision::kFp16,
                                                            Precision::kBf16,  Precision::kFp8,  Precision::kFp4};

// A size for messages: integers in full (50304), anything else in %g.
std::string size_text(double v) {
  if (v == std::trunc(v) && std::fabs(v) < 1e15) return fmt::format("{:.0f}", v);
  return fmt::format("{:g}", v);
}

std::string range_text(const std::vector<double>& axis) {
  return axis.empty() ? "none" : size_text(axis.front()) + ".." + size_text(axis.back());
}

// The flash-attention kernels of the profile run in 16-bit (our kernels, like
// FlashAttention-2, take fp16/bf16 inputs); their rate says nothing about fp32.
bool sixteen_bit(Precision p) { return p == Precision::kBf16 || p == Precision::kFp16; }

CostSource gemm_miss(GemmTable::Miss miss) {
  switch (miss) {
    case GemmTable::Miss::kNone: return CostSource::kProfile;
    case GemmTable::Miss::kNoRows: return CostSource::kNoGemmRows;
    case GemmTable::Miss::kOutsideGrid: return CostSource::kOutsideGemmGrid;
    case GemmTable::Miss::kCornerMissing: return CostSource::kGemmCornerMissing;
  }
  return CostSource::kOutsideGemmGrid;
}

// A kernel's own rows, else (PyTorch's kernels, docs/model.md "Calibrated costs")
// the rows of ours that does the same work, said apart from a measurement; `rows`
// looks a kernel id up. Where neither covers it: the kernel's own miss.
template <class Rows>
CostLookup with_stand_in(KernelId kernel, const Rows& rows) {
  const CostLookup own = rows(kernel);
  const std::optional<KernelId> ours = stand_in_for(kernel);
  if (own.measured() || !ours) return own;
  const CostLookup stand_in = rows(*ours);
  return stand_in.measured() ? CostLookup{stand_in.seconds, CostSource::kStandIn} : own;
}

}  // namespace

ProfiledComputeModel::ProfiledComputeModel(const CalibrationProfile& profile, const GpuSpec& gpu)
    : copy_bandwidth_(measured_copy_bandwidth(profile.copies, CopyKind::kDeviceToDevice)),
      launch_overhead_s_(profile.launch_overhead_s.value_or(0.0)),
      host_dispatch_(profile.host_dispatch) {
  // The fallback: the spec's roofline with the profile's measured efficiencies
  // (docs/model.md, "Calibrated costs", "Fallback").
  GpuSpec measured = gpu;
  if (copy_bandwidth_ && gpu.memory_bandwidth > 0.0)
    measured.memory_bandwidth_efficiency = *copy_bandwidth_ / gpu.memory_bandwidth;
  fallback_.reserve(kPrecisions.size());
  for (Precision p : kPrecisions) {  // in enum order: fallback_[i] is Precision i
    const auto i = static_cast<std::size_t>(p);
    auto of_dtype = [p](const std::vector<GemmRow>& all) {
      std::vector<GemmRow> rows;
      for (const GemmRow& r : all)
        if (r.dtype == p) rows.push_back(r);
      return rows;
    };
    const std::vector<GemmRow> rows = of_dtype(profile.gemm);
    gemm_[i] = GemmTable(rows);
    data_gradient_[i] = GemmTable(of_dtype(profile.gemm_data_gradient));
    weight_gradient_[i] = GemmTable(of_dtype(profile.gemm_weight_gradient));
    GpuSpec spec = measured;
    if (gpu.supports(p)) {
      std::vector<EfficiencyPoint> curve = measured_matmul_efficiency(rows, p, gpu.peak(p));
      matmul_points_[i] = curve.size();
      if (!curve.empty()) {
        spec.matmul_efficiency = std::move(curve);
        // The profile's fp8 GEMMs replace the spec's fp8 curves too.
        if (p == Precision::kFp8) {
          spec.matmul_efficiency_fp8.clear();
          spec.matmul_efficiency_fp8_fast.clear();
        }
      }
    }
    fallback_.emplace_back(std::move(spec));
  }
  std::array<std::vector<LogCurve::Point>, kNumKernelIds> bandwidth;
  std::array<std::map<int, std::vector<LogCurve::Point>>, 4> attention;
  for (const KernelRow& r : profile.kernels) {
    if (r.id == KernelId::kNone || !(r.seconds > 0.0)) continue;
    if (is_attention(r.id)) {
      const std::optional<double> d = r.shape_value("head_dim");
      if (!d || !(r.flops > 0.0)) continue;
      attention[attention_index(r.id)][static_cast<int>(*d)].push_back(
          {r.flops, r.flops / r.seconds});
    } else if (r.bytes > 0.0) {
      bandwidth[static_cast<std::size_t>(r.id)].push_back({r.bytes, r.bytes / r.seconds});
    }
  }
  for (std::size_t i = 0; i < kNumKernelIds; ++i) bandwidth_[i] = LogCurve(std::move(bandwidth[i]));
  for (std::size_t i = 0; i < attention.size(); ++i)
    for (auto& [head_dim, points] : attention[i]) attention_[i].emplace(head_dim, LogCurve(std::move(points)));
}

CostLookup ProfiledComputeModel::lookup(const KernelWork& work, Precision recipe) const {
  const Precision precision = kernel_precision(work, recipe);
  const double fallback_s = fallback(precision).seconds(work, precision);  // also rejects negative work
  CostLookup found;
  switch (work.kind) {
    case KernelClass::kMatmul: found = gemm(work, precision); break;
    case KernelClass::kAttention: found = attention(work, precision); break;
    case KernelClass::kMemoryBound: found = memory_bound(work); break;
  }
  if (!found.measured() && !found.stand_in()) found.seconds = fallback_s;
  // Kernels launched back to back from one host thread start no faster than this.
  found.seconds = std::max(found.seconds, launch_overhead_s_);
  return found;
}

double ProfiledComputeModel::host_seconds(const KernelWork& work) const {
  if (!host_dispatch_) return 0.0;
  switch (work.host_pass) {
    case HostPass::kNone:
    case HostPass::kGraph: return 0.0;
    case HostPass::kForward: return host_dispatch_->forward_s;
    case HostPass::kBackward: return host_dispatch_->backward_s;
    case HostPass::kOptimizer:
      return host_dispatch_->optimizer_s > 0.0 ? host_dispatch_->optimizer_s : host_dispatch_->forward_s;
  }
  return 0.0;
}

CostLookup ProfiledComputeModel::gemm(const KernelWork& work, Precision precision) const {
  if (!(work.m > 0.0 && work.n > 0.0 && work.k > 0.0)) return {0.0, CostSource::kNoGemmShape};
  const GemmTable& t = table(precision);
  const double count = static_cast<double>(work.count);
  if (!work.backward) {
    const GemmTable::Lookup one = t.seconds(work.m, work.n, work.k);
    return {count * one.seconds, gemm_miss(one.miss)};
  }
  // Data gradient dX[m x k] = dY[m x n] W[n x k], weight gradient dW[n x k] = dY^T[n x m] X[m x k]:
  // at the backward layouts' rows where the profile has them (docs/model.md, "Calibrated
  // costs"), else as forward GEMMs of the same products, dX (m, k, n) and dW^T (k, n, m).
  const auto p = static_cast<std::size_t>(precision);
  double seconds = 0.0;
  if (work.gradients != Gradients::kWeight) {
    GemmTable::Lookup data = data_gradient_[p].seconds(work.m, work.k, work.n);
    if (data.miss != GemmTable::Miss::kNone) data = t.seconds(work.m, work.k, work.n);
    if (data.miss != GemmTable::Miss::kNone) return {0.0, gemm_miss(data.miss)};
    seconds += data.seconds;
  }
  if (work.gradients != Gradients::kData) {
    GemmTable::Lookup weight = weight_gradient_[p].seconds(work.n, work.k, work.m);
    if (weight.miss != GemmTable::Miss::kNone) weight = t.seconds(work.k, work.n, work.m);
    if (weight.miss != GemmTable::Miss::kNone) return {0.0, gemm_miss(weight.miss)};
    seconds += weight.seconds;
  }
  return {count * seconds, CostSource::kProfile};
}

CostLookup ProfiledComputeModel::attention(const KernelWork& work, Precision precision) const {
  if (!is_attention(work.kernel)) return {0.0, CostSource::kUnfusedAttention};
  return with_stand_in(work.kernel, [&](KernelId k) { return attention_rows(k, work, precision); });
}

CostLookup ProfiledComputeModel::attention_rows(KernelId kernel, const KernelWork& work, Precision precision) const {
  if (!sixteen_bit(precision)) return {0.0, CostSource::kAttentionPrecision};
  const auto& curves = attention_curves(kernel);
  if (curves.empty()) return {0.0, CostSource::kNoKernelRows};
  // A profile's rows are of equal query and value widths: none for MLA's.
  const bool equal_widths = value_width(work.head_dim, work.value_head_dim) == work.head_dim;
  const auto it = equal_widths ? curves.find(work.head_dim) : curves.end();
  if (it == curves.end()) return {0.0, CostSource::kNoHeadDim};
  const std::optional<double> rate = it->second.at(work.flops);
  if (!rate) return {0.0, CostSource::kOutsideKernelRange};
  return {work.flops / *rate, CostSource::kProfile};
}

CostLookup ProfiledComputeModel::memory_bound(const KernelWork& work) const {
  if (work.kernel == KernelId::kNone || is_attention(work.kernel)) return {0.0, CostSource::kNoKernel};
  return with_stand_in(work.kernel, [&](KernelId k) { return memory_bound_rows(k, work); });
}

CostLookup ProfiledComputeModel::memory_bound_rows(KernelId kernel, const KernelWork& work) const {
  const LogCurve& curve = bandwidth_[static_cast<std::size_t>(kernel)];
  if (curve.empty()) return {0.0, CostSource::kNoKernelRows};
  const std::optional<double> bandwidth = curve.at(work.bytes);
  if (!bandwidth) return {0.0, CostSource::kOutsideKernelRange};
  return {work.bytes / *bandwidth, CostSource::kProfile};
}

FallbackEfficiency ProfiledComputeModel::fallback_efficiency(Precision precision) const {
  FallbackEfficiency e;
  e.memory_bandwidth = copy_bandwidth_;
  e.matmul_points = matmul_points_[static_cast<std::size_t>(precision)];
  if (launch_overhead_s_ > 0.0) e.launch_overhead_s = launch_overhead_s_;
  return e;
}

std::string ProfiledComputeModel::fallback_reason(const KernelWork& work, Precision precision) const {
  const CostSource source = lookup(work, precision).source;
  const std::string_view dtype = to_string(precision);
  const std::string_view kernel = to_string(work.kernel);
  switch (source) {
    case CostSource::kProfile: return "";
    case CostSource::kNoGemmShape: return "matmul without a GEMM shape";
    case CostSource::kNoGemmRows: return fmt::format("gemm {}: the profile has no {} GEMMs", dtype, dtype);
    case CostSource::kOutsideGemmGrid:
    case CostSource::kGemmCornerMissing: {
      // Name the GEMM that missed: the forward one, or the first of the two backward ones.
      struct Gemm {
        double m, n, k;
        std::string_view role;
      };
      std::vector<Gemm> gemms;
      if (!work.backward) {
        gemms = {{work.m, work.n, work.k, ""}};
      } else {
        if (work.gradients != Gradients::kWeight) gemms.push_back({work.m, work.k, work.n, " (data gradient)"});
        if (work.gradients != Gradients::kData) gemms.push_back({work.k, work.n, work.m, " (weight gradient)"});
      }
      const GemmTable& t = table(precision);
      for (const Gemm& g : gemms) {
        const GemmTable::Miss miss = t.seconds(g.m, g.n, g.k).miss;
        if (miss == GemmTable::Miss::kNone) continue;
        const std::string what = fmt::format("gemm {} m={} n={} k={}{}", dtype, size_text(g.m), size_text(g.n),
                                             size_text(g.k), g.role);
        if (miss == GemmTable::Miss::kCornerMissing) return what + ": a bracketing grid point is not measured";
        return fmt::format("{}: outside the measured grid (m {}, n {}, k {})", what, range_text(t.axis(0)),
                           range_text(t.axis(1)), range_text(t.axis(2)));
      }
      return "gemm: not in the profile";
    }
    case CostSource::kUnfusedAttention: return "unfused attention (batched per-head GEMMs): no profile table measures them";
    case CostSource::kNoKernel: return "no measured kernel does this op's work";
    case CostSource::kNoKernelRows: return fmt::format("{}: not in the profile", kernel);
    case CostSource::kOutsideKernelRange: {
      if (is_attention(work.kernel)) {
        const LogCurve& c = attention_curves(work.kernel).at(work.head_dim);
        return fmt::format("{} head_dim={} at {:.4g} FLOP: outside the measured {:.4g}..{:.4g} FLOP", kernel,
                           work.head_dim, work.flops, c.min_x(), c.max_x());
      }
      const LogCurve& c = bandwidth_[static_cast<std::size_t>(work.kernel)];
      return fmt::format("{} at {} B: outside the measured {}..{} B", kernel, size_text(work.bytes),
                         size_text(c.min_x()), size_text(c.max_x()));
    }
    case CostSource::kNoHeadDim: return no_head_dim(kernel, work);
    case CostSource::kAttentionPrecision:
      return fmt::format("{}: measured in 16-bit, training in {}", kernel, dtype);
    case CostSource::kStandIn: {
      const std::string_view ours = to_string(stand_in_for(work.kernel).value_or(KernelId::kNone));
      const bool attention_kernel = is_attention(work.kernel);
      const CostSource own =
          (attention_kernel ? attention_rows(work.kernel, work, precision) : memory_bound_rows(work.kernel, work)).source;
      std::string what;
      if (own == CostSource::kNoKernelRows)
        what = fmt::format("{}: not in the profile", kernel);
      else if (own == CostSource::kNoHeadDim)
        what = no_head_dim(kernel, work);
      else if (attention_kernel)
        what = fmt::format("{} head_dim={} at {:.4g} FLOP: outside its measured range", kernel, work.head_dim,
                           work.flops);
      else
        what = fmt::format("{} at {} B: outside its measured range", kernel, size_text(work.bytes));
      return fmt::format("{}; priced at our {} kernel's measured {}", what, ours,
                         attention_kernel ? "rate" : "bandwidth");
    }
  }
  return "not in the profile";
}

std::vector<std::unique_ptr<ComputeModel>> pool_compute_models(const ClusterSpec& cluster,
                                                               const CalibrationProfile* profile) {
  std::vector<std::unique_ptr<ComputeModel>> out;
  for (int k = 0; k < cluster.num_pools(); ++k) {
    const GpuSpec& gpu = cluster.pool_gpu(k);
    if (profile != nullptr && gpu.name == cluster.gpu.name)
      out.push_back(std::make_unique<ProfiledComputeModel>(*profile, gpu));
    else
      out.push_back(std::make_unique<RooflineComputeModel>(gpu));
  }
  return out;
}

}  // namespace trainsim::hw
