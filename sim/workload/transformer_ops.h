#pragma once
// A transformer's kernels with their FLOPs and bytes, for one micro-batch of b
// sequences of s tokens on one GPU (docs/model.md, "Operations"). Forward,
// backward and recomputation lists are built per layer so schedules can
// interleave them.
#include <string>
#include <vector>

#include "hardware/compute_model.h"
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
};

class TransformerOps {
 public:
  TransformerOps(const ModelConfig& model, const TrainingConfig& training, long long micro_batch);

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
  [[nodiscard]] Op elementwise(std::string name, double bytes, double params, long long layer) const;
  [[nodiscard]] static Op backward_of(const Op& fwd, double flops_factor, double bytes_factor);
  [[nodiscard]] std::vector<Op> attention_core_forward(long long layer) const;

  ModelConfig model_;
  TrainingConfig training_;
  double b_;          // sequences
  double s_;          // tokens per sequence
  double tokens_;     // b s
  double act_bytes_;  // bytes of one activation element
  double gemm_bytes_; // bytes of one GEMM operand element
};

}  // namespace trainsim::workload
