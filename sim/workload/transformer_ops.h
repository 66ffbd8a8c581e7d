#pragma once
// A transformer's kernels with their FLOPs and bytes, for one micro-batch of b
// sequences of s tokens on one GPU (docs/model.md, "Operations"). Forward,
// backward and recomputation lists are built per layer so schedules can
// interleave them.
#include <optional>
#include <string>
#include <vector>

#include "hardware/compute_model.h"
#include "network/collective.h"
#include "workload/model_config.h"
#include "workload/parallel_config.h"
#include "workload/training_config.h"

namespace trainsim::workload {

struct Op {
  std::string name;
  hw::KernelWork work;
  // FLOPs this op contributes to model FLOPs (MFU): matmul and attention FLOPs
  // as Megatron-LM counts them (full, non-causal attention; no recomputation).
  double model_flops = 0.0;
  // Backward ops: parameters whose gradients are complete when the op ends.
  double grad_params = 0.0;
  long long layer = -1;  // -1: embedding or output layer
  // Tensor-parallel conjugate operators (Megatron-LM's f and g; Shoeybi et al.
  // 2019, Korthikanti et al. 2022): a marker that moves no data itself. In the
  // forward pass `tp_forward` runs over the TP group, in the backward pass
  // `tp_backward`; either may be absent (identity). tp_bytes is S of the
  // collective (the full b s h activation).
  bool tp_marker = false;
  std::optional<net::CollectiveKind> tp_forward;
  std::optional<net::CollectiveKind> tp_backward;
  double tp_bytes = 0.0;
};

class TransformerOps {
 public:
  // `tensor`: tensor-parallel size t; matmuls, attention heads and the vocabulary
  // are split t ways (Megatron-LM column/row-parallel linears); with
  // `sequence_parallel` norms, dropouts and residuals are split along the sequence
  // too, and each all-reduce becomes a reduce-scatter + all-gather pair.
  TransformerOps(const ModelConfig& model, const TrainingConfig& training, long long micro_batch, int tensor = 1,
                 bool sequence_parallel = false);

  [[nodiscard]] std::vector<Op> embedding_forward() const;
  [[nodiscard]] std::vector<Op> layer_forward(long long layer) const;
  [[nodiscard]] std::vector<Op> head_forward() const;  // final norm, output layer, loss
  [[nodiscard]] std::vector<Op> head_backward() const;
  [[nodiscard]] std::vector<Op> layer_backward(long long layer) const;
  // Work redone before a layer's backward: the whole forward (full) or the
  // attention core (selective, unfused attention only; flash recomputes inside
  // its own backward already).
  [[nodiscard]] std::vector<Op> layer_recompute(long long layer, Recompute granularity) const;
  [[nodiscard]] std::vector<Op> embedding_backward() const;
  // Optimizer step over `params` local parameters (memory bound).
  [[nodiscard]] Op optimizer_step(double params) const;

  // Model FLOPs of one micro-batch, forward + backward (= 3 x forward).
  [[nodiscard]] double model_flops_per_microbatch() const;

 private:
  [[nodiscard]] Op matmul(std::string name, double m, double n, double k, double params, long long layer,
                          int count = 1) const;
  [[nodiscard]] Op elementwise(std::string name, double bytes, double params, long long layer,
                               hw::KernelId kernel = hw::KernelId::kNone) const;
  [[nodiscard]] static Op backward_of(const Op& fwd, double flops_factor, double bytes_factor);
  [[nodiscard]] std::vector<Op> attention_core_forward(long long layer) const;
  // The f (before a column-parallel linear) and g (after a row-parallel one) markers.
  [[nodiscard]] Op tp_enter(std::string name, long long layer) const;
  [[nodiscard]] Op tp_exit(std::string name, long long layer) const;

  ModelConfig model_;
  TrainingConfig training_;
  double b_;          // sequences
  double s_;          // tokens per sequence
  double tokens_;     // b s
  double act_bytes_;  // bytes of one activation element
  double gemm_bytes_; // bytes of one GEMM operand element
  double tp_;         // tensor-parallel size
  double sp_;         // divisor of the sequence-split elementwise work: t with SP, else 1
};

}  // namespace trainsim::workload
