#pragma once
// Kernel costs from a calibration profile (docs/model.md, "Calibrated costs"):
// GEMMs by shape from the GEMM table, our memory-bound kernels by achieved
// bandwidth, flash attention by achieved FLOP/s, each read between measured
// points only. Anything the profile does not cover is priced by the GPU spec's
// roofline with the efficiencies the profile measured (its GEMMs' efficiency
// curve, its device copy bandwidth), and lookup() says which happened. No kernel
// takes less than the profile's launch overhead.
#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hardware/calibration_profile.h"
#include "hardware/cluster.h"
#include "hardware/compute_model.h"
#include "hardware/gemm_table.h"
#include "hardware/log_curve.h"

namespace trainsim::hw {

// Where a kernel's cost came from: the profile, or the roofline and why.
enum class CostSource : std::uint8_t {
  kProfile,             // a measured time, or interpolated between measured points
  kNoGemmShape,         // a matmul without a GEMM shape
  kNoGemmRows,          // no GEMMs of the training dtype in the profile
  kOutsideGemmGrid,     // a GEMM shape outside the measured grid
  kGemmCornerMissing,   // inside the grid, but a bracketing point is not measured
  kUnfusedAttention,    // batched per-head attention GEMMs: no table measures them
  kNoKernel,            // no measured kernel does this op's work (SwiGLU, MoE dispatch, ...)
  kNoKernelRows,        // the op's kernel is not in the profile
  kOutsideKernelRange,  // bytes (or FLOPs) outside the kernel's measured sizes
  kNoHeadDim,           // no attention rows with the op's head dimension
  kAttentionPrecision,  // attention was measured in 16-bit, training runs in fp32/tf32/fp8
  // One of PyTorch's kernels (sdpa_*, torch_*) the profile's rows do not cover:
  // priced by the rows of ours that does the same work (stand_in_for).
  kStandIn,
};

// What the roofline fallback of a profile runs on, for the report.
struct FallbackEfficiency {
  // B/s of the profile's largest device-to-device copy; nothing: the GPU spec's
  // memory_bandwidth x memory_bandwidth_efficiency.
  std::optional<double> memory_bandwidth;
  // Points of the measured matmul efficiency curve of the dtype; 0: the GPU
  // spec's curve (the profile has no GEMMs of that dtype).
  std::size_t matmul_points = 0;
  std::optional<double> launch_overhead_s;  // the floor of every kernel's time
};

struct CostLookup {
  double seconds = 0.0;
  CostSource source = CostSource::kProfile;
  [[nodiscard]] bool measured() const { return source == CostSource::kProfile; }
  // Priced from the profile's rows of another kernel (kStandIn), not the roofline.
  [[nodiscard]] bool stand_in() const { return source == CostSource::kStandIn; }
};

class ProfiledComputeModel final : public ComputeModel {
 public:
  // `gpu` gives the roofline fallback's datasheet peaks and bandwidth; the
  // profile's measurements replace its efficiencies where it has them.
  ProfiledComputeModel(const CalibrationProfile& profile, const GpuSpec& gpu);

  // The kernel's time; replayed from a CUDA graph (HostPass::kGraph), plus the
  // profile's graph_kernel_s per kernel (docs/model.md, "CUDA graphs").
  [[nodiscard]] double seconds(const KernelWork& work, Precision precision) const override {
    const double graph = work.host_pass == HostPass::kGraph && host_dispatch_
                             ? host_dispatch_->graph_kernel_s * static_cast<double>(work.count)
                             : 0.0;
    return lookup(work, precision).seconds + graph;
  }
  [[nodiscard]] std::string_view name() const override { return "profile"; }
  // The profile's host_dispatch for a host-dispatched kernel: per kernel of its
  // pass, or the whole optimizer step for the (fused) optimizer kernel (per forward
  // kernel where the profile has no optimizer figure).
  [[nodiscard]] double host_seconds(const KernelWork& work) const override;
  [[nodiscard]] const std::optional<HostDispatch>& host_dispatch() const { return host_dispatch_; }

  // The cost and where it came from. Cheap: a few binary searches, no allocation.
  [[nodiscard]] CostLookup lookup(const KernelWork& work, Precision precision) const;
  // Why `work` falls back to the roofline (or a stand-in kernel), in words, e.g.
  // "gemm bf16 m=8192 n=50304 k=768: outside the measured grid (m 256..16384,
  // ...)"; empty when the profile prices it.
  [[nodiscard]] std::string fallback_reason(const KernelWork& work, Precision precision) const;
  [[nodiscard]] FallbackEfficiency fallback_efficiency(Precision precision) const;

 private:
  [[nodiscard]] CostLookup gemm(const KernelWork& work, Precision precision) const;
  [[nodiscard]] CostLookup attention(const KernelWork& work, Precision precision) const;
  [[nodiscard]] CostLookup attention_rows(KernelId kernel, const KernelWork& work, Precision precision) const;
  [[nodiscard]] CostLookup memory_bound(const KernelWork& work) const;
  [[nodiscard]] CostLookup memory_bound_rows(KernelId kernel, const KernelWork& work) const;
  [[nodiscard]] const GemmTable& table(Precision p) const { return gemm_[static_cast<std::size_t>(p)]; }
  // attention_ index: ours forward, backward, then PyTorch's (sdpa) forward, backward.
  [[nodiscard]] static std::size_t attention_index(KernelId k) {
    const bool sdpa = k == KernelId::kSdpaForward || k == KernelId::kSdpaBackward;
    return (sdpa ? std::size_t{2} : std::size_t{0}) + (is_backward_attention(k) ? std::size_t{1} : std::size_t{0});
  }
  [[nodiscard]] const std::map<int, LogCurve>& attention_curves(KernelId k) const {
    return attention_[attention_index(k)];
  }

  [[nodiscard]] const RooflineComputeModel& fallback(Precision p) const { return fallback_[static_cast<std::size_t>(p)]; }

  std::vector<RooflineComputeModel> fallback_;          // by Precision: the spec with the profile's efficiencies
  std::array<std::size_t, kNumPrecisions> matmul_points_{};          // by Precision: points of the measured curve (0: spec's)
  std::optional<double> copy_bandwidth_;                // B/s, the largest device-to-device copy
  double launch_overhead_s_ = 0.0;
  std::optional<HostDispatch> host_dispatch_;
  std::array<GemmTable, kNumPrecisions> gemm_;                      // by Precision
  std::array<GemmTable, kNumPrecisions> data_gradient_;             // by Precision: backward-layout rows, if any
  std::array<GemmTable, kNumPrecisions> weight_gradient_;
  std::array<LogCurve, kNumKernelIds> bandwidth_;       // memory-bound kernels: B/s over bytes
  std::array<std::map<int, LogCurve>, 4> attention_;    // see attention_index: FLOP/s over FLOPs, by head_dim
};

// Each pool's compute model (one without pools): the calibration profile's for the
// pools of the GPU it was measured on (the cluster's, pool 0's), the roofline of
// their GPU preset for the others (docs/model.md, "Heterogeneous jobs").
std::vector<std::unique_ptr<ComputeModel>> pool_compute_models(const ClusterSpec& cluster,
                                                               const CalibrationProfile* profile);

}  // namespace trainsim::hw
