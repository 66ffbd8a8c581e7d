#pragma once
// One GPU model as the simulator sees it: datasheet peaks plus the measured
// efficiencies that turn peaks into achievable rates (sources in the preset
// files, scenarios/hardware/*.json, and in docs/model.md section "Compute cost").
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "hardware/kernel_id.h"
#include "hardware/precision.h"

namespace trainsim::hw {

// Fraction of the dense peak one GEMM of `flops` (= 2 M N K) reaches.
struct EfficiencyPoint {
  double flops = 0.0;
  double efficiency = 0.0;
};

// eta(F) of a curve of measured points (sorted by flops, at least one):
// piecewise linear in log F through the points; beyond the largest it stays
// flat; below the smallest it follows the log-log slope of the first segment
// (docs/model.md, "Matmul efficiency").
[[nodiscard]] double efficiency_at(const std::vector<EfficiencyPoint>& points, double flops);

// Which fused attention kernel runs (training.attention_backend; docs/model.md,
// "Attention efficiency"): the GPU's own, the curves a preset lists without a
// "kernel" (cuDNN's on H100, as Transformer Engine and PyTorch 2.11 pick it), or
// FlashAttention-2's ("flash2": the flash-attn 2 package, and PyTorch SDPA's
// flash backend, its default on Hopper before cuDNN's).
enum class AttentionKernel : std::uint8_t { kDefault, kFlash2 };

// Flash attention's share of the dense peak, measured for one head dimension
// and kernel (docs/model.md, "Attention efficiency"): by the kernel's FLOPs as
// trainsim counts them (forward b h s^2 (d + d_v), the causal half; backward 2.5x
// that). head_dim is the query and key width per head, value_head_dim the value's
// (0: the same; multi-head latent attention's 192 and 128).
struct AttentionEfficiency {
  int head_dim = 0;
  std::vector<EfficiencyPoint> forward;   // sorted by flops, at least one point
  std::vector<EfficiencyPoint> backward;  // sorted by flops, at least one point
  AttentionKernel kernel = AttentionKernel::kDefault;
  int value_head_dim = 0;
};

// The value's width per head: value_head_dim, or head_dim where that is 0.
[[nodiscard]] constexpr int value_width(int head_dim, int value_head_dim) {
  return value_head_dim != 0 ? value_head_dim : head_dim;
}

// A grouped expert GEMM's efficiency (one kernel over a rank's local experts,
// as Transformer Engine's and PyTorch's grouped GEMMs run them), by the FLOPs
// 2 m n k of one expert's GEMM, for each GEMM of a linear layer: the forward,
// the data gradient and the weight gradient (docs/model.md, "Grouped expert GEMMs").
struct GroupedMatmulEfficiency {
  std::vector<EfficiencyPoint> forward;
  std::vector<EfficiencyPoint> data_gradient;
  std::vector<EfficiencyPoint> weight_gradient;
};

struct GpuSpec {
  std::string name;
  std::map<Precision, double> peak_flops;  // dense FLOP/s; a missing entry = not supported
  double memory_capacity_bytes = 0.0;
  double memory_bandwidth = 0.0;             // B/s, datasheet
  double memory_bandwidth_efficiency = 1.0;  // measured copy rate / datasheet
  // Memory-bound kernels measured apart: their achieved rate at trainsim's byte
  // count over the datasheet bandwidth, in place of memory_bandwidth_efficiency
  // (docs/model.md, "Compute cost").
  std::map<KernelId, double> memory_kernel_efficiency;
  double tdp_watts = 0.0;
  // Energy of a full run (docs/model.md, "Reliability"): the GPU's draw at zero
  // utilization, and a node's draw besides its GPUs (CPUs, memory, NICs,
  // NVSwitches, fans); sources in the preset files. 0: not known.
  double idle_watts = 0.0;
  double node_overhead_watts = 0.0;
  std::vector<EfficiencyPoint> matmul_efficiency;  // sorted by flops, at least one point
  // fp8 GEMMs measured apart (docs/model.md, "FP8 recipes"): Transformer Engine
  // runs the forward GEMM with fast accumulation and the two gradient GEMMs
  // without. Empty: fp8 GEMMs take matmul_efficiency at the fp8 peak.
  std::vector<EfficiencyPoint> matmul_efficiency_fp8;       // default (split) accumulation
  std::vector<EfficiencyPoint> matmul_efficiency_fp8_fast;  // fast accumulation
  // Flash attention kernels of a head dimension listed here take its curves (a
  // FlashAttention-2 kernel without curves of its own takes the default kernel's);
  // any other attention takes the matmul curve.
  std::vector<AttentionEfficiency> attention_efficiency;
  // Grouped expert GEMMs measured apart; none: they take matmul_efficiency at the
  // FLOPs of one expert's GEMM (forward) or of its two backward GEMMs.
  std::optional<GroupedMatmulEfficiency> grouped_matmul_efficiency;
  // Relative standard deviation of one kernel's time from run to run on one GPU
  // (docs/model.md, "Step-time variability"); 0: not known.
  double kernel_time_cv = 0.0;
  // Compute kernels take (1 + s) times as long while a collective of their GPU is
  // in flight: NCCL's blocks hold SMs and HBM bandwidth (docs/model.md, "Compute
  // beside communication"); s of tensor-core kernels (GEMMs, attention) and of
  // memory-bound kernels apart; 0: no slowdown.
  double overlap_compute_slowdown = 0.0;  // KernelClass::kMatmul and kAttention
  double overlap_memory_slowdown = 0.0;   // KernelClass::kMemoryBound
  // The SM clock a training step holds over the clock the GPU's attention and
  // grouped-GEMM curves ran at, each kernel timed alone (behind a GPU sleep, at the
  // boost clock): those curves are scaled by it (docs/model.md, "Clock under
  // training load"); 1: no scaling.
  double training_clock_ratio = 1.0;
  // Where a preset's efficiencies come from when not measured on this GPU (which
  // GPU's curves, at which peaks) and how far to trust them; the summary prints
  // it. Empty: measured on this GPU, or a user's spec.
  std::string efficiency_basis;
  // The fp4 formats its tensor cores run ("nvfp4", "mxfp4"), the first the default
  // training.fp4_recipe; empty with an fp4 peak: NVFP4 (docs/scenario.md, "cluster.gpu").
  std::vector<std::string> fp4_formats;

  [[nodiscard]] bool supports(Precision p) const { return peak_flops.contains(p); }
  // Throws std::invalid_argument when the GPU has no peak for p.
  [[nodiscard]] double peak(Precision p) const;
};

}  // namespace trainsim::hw
