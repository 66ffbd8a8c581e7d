#pragma once
// How long a kernel takes on one GPU. The roofline model here uses datasheet
// peaks and measured efficiencies (docs/model.md, "Compute cost"); calibration
// profiles plug in behind the same interface (hardware/profiled_compute_model.h).
#include <cstdint>
#include <string_view>

#include "hardware/gpu_spec.h"
#include "hardware/kernel_id.h"
#include "hardware/precision.h"

namespace trainsim::hw {

enum class KernelClass {
  kMatmul,      // GEMMs on tensor cores
  kAttention,   // the attention core (QK^T, softmax, AV), fused or not
  kMemoryBound  // elementwise, normalization, embedding, optimizer
};

// The work of one kernel launch, or of `count` identical GEMMs launched together
// (grouped expert GEMMs): flops and bytes are the totals.
// Which part of a framework's step issues a kernel from the host (docs/model.md,
// "Host dispatch"): Python modules forward, the autograd engine backward, the
// optimizer's step; or none of them, the step replayed from a CUDA graph (kGraph: no
// host issue, each kernel a graph node's launch gap longer).
enum class HostPass : std::uint8_t { kNone, kForward, kBackward, kOptimizer, kGraph };

// Which GEMMs a backward matmul op runs: both gradients in one op, or one of them
// (a framework that interleaves communication between them: docs/model.md,
// "Tensor-parallel backward").
enum class Gradients : std::uint8_t { kBoth, kData, kWeight };

struct KernelWork {
  KernelClass kind = KernelClass::kMemoryBound;
  double flops = 0.0;  // executed FLOPs
  double bytes = 0.0;  // bytes moved to and from HBM
  int count = 1;
  // What a calibration profile looks the kernel up by (docs/model.md, "Calibrated
  // costs"); the roofline ignores these. One GEMM C[m x n] = A[m x k] B[k x n]
  // (0: no GEMM shape); a backward matmul is its data gradient (m, k, n) plus its
  // weight gradient (k, n, m), each `count` times.
  double m = 0.0;
  double n = 0.0;
  double k = 0.0;
  bool backward = false;              // a backward-pass op
  Gradients gradients = Gradients::kBoth;  // a backward matmul: which of its GEMMs
  // A grouped expert GEMM: one kernel over `count` experts' GEMMs (priced by
  // GpuSpec::grouped_matmul_efficiency where the GPU has it).
  bool grouped = false;
  // Under an fp8 (or fp4) recipe, whether this GEMM runs quantized (Transformer
  // Engine's linear layers); false: it stays in 16 bits (Megatron-Core's output layer is
  // not a Transformer Engine layer). Attention stays in 16 bits either way
  // (kernel_precision).
  bool fp8 = true;
  KernelId kernel = KernelId::kNone;  // the measured kernel that does this work, if any
  int head_dim = 0;                   // flash attention: the query and key head dimension
  int value_head_dim = 0;             // and the value's (0: the same as head_dim)
  // Launched one by one from a framework's host thread (PyTorch eager), in this
  // pass of its step: the GPU cannot start it before the host has issued it
  // (ComputeModel::host_seconds). kNone: not host-dispatched (fused kernels).
  HostPass host_pass = HostPass::kNone;
  // Flash attention: which kernel (the GPU's own or FlashAttention-2's).
  AttentionKernel attention_kernel = AttentionKernel::kDefault;
};

// The precision a kernel runs in under a recipe of `recipe` precision
// (docs/model.md, "FP8 recipes"): an fp8 recipe runs its fp8 GEMMs in fp8 and
// attention and the GEMMs that are not Transformer Engine layers in bf16
// (Transformer Engine's DotProductAttention is 16-bit unless fp8_dpa is set,
// which Megatron-LM and NeMo leave off by default).
Precision kernel_precision(const KernelWork& work, Precision recipe);

// GEMMs per `count` in a matmul op: a backward op of both gradients runs two,
// each as large as the forward GEMM; anything else one.
int gemms_per_count(const KernelWork& work);

class ComputeModel {
 public:
  virtual ~ComputeModel() = default;
  [[nodiscard]] virtual double seconds(const KernelWork& work, Precision precision) const = 0;
  [[nodiscard]] virtual std::string_view name() const = 0;
  // Host time to issue a host-dispatched kernel (docs/model.md, "Host dispatch"):
  // measured only (a calibration profile's host_dispatch); 0 where unknown.
  [[nodiscard]] virtual double host_seconds(const KernelWork& /*work*/) const { return 0.0; }
};

class RooflineComputeModel final : public ComputeModel {
 public:
  explicit RooflineComputeModel(GpuSpec gpu);
  // time = max(flops / (peak * eta(flops per GEMM)), bytes / (bandwidth * eta_mem))
  [[nodiscard]] double seconds(const KernelWork& work, Precision precision) const override;
  [[nodiscard]] std::string_view name() const override { return "roofline"; }
  // eta(F): piecewise linear in log F through the measured points; beyond the
  // largest point it stays flat; below the smallest it follows the log-log slope
  // of the first segment (docs/model.md, "Matmul efficiency").
  [[nodiscard]] double matmul_efficiency(double flops_per_gemm) const;
  // The share of the peak a matmul or attention kernel running in `precision`
  // reaches: a flash attention kernel of a head dimension the GPU has attention
  // curves for takes those (docs/model.md, "Attention efficiency"), an fp8 GEMM
  // the GPU's fp8 curves where it has them ("FP8 recipes"), anything else the
  // matmul curve.
  [[nodiscard]] double efficiency(const KernelWork& work, Precision precision) const;

 private:
  // The curves of the kernel's head dimension and attention kernel; a
  // FlashAttention-2 kernel the GPU has none for takes its default kernel's.
  // None: the matmul curve prices it.
  [[nodiscard]] const AttentionEfficiency* attention_curves(const KernelWork& work) const;
  // Whether a grouped expert GEMM in `precision` is priced by grouped_matmul_efficiency.
  [[nodiscard]] bool prices_grouped(Precision precision) const;
  // A grouped expert GEMM on a GPU with grouped_matmul_efficiency: its compute time.
  [[nodiscard]] double grouped_matmul_seconds(const KernelWork& work, Precision precision) const;

  GpuSpec gpu_;
};

}  // namespace trainsim::hw
