#pragma once
// Memory per GPU at the peak of an iteration (docs/model.md, "Memory"): model
// states after Rajbhandari et al. (ZeRO, 2020) and activations after Korthikanti
// et al. (2022, section 4), generalized to GQA, SwiGLU, MoE and flash attention.
#include <string>

#include "workload/model_config.h"
#include "workload/parallel_config.h"
#include "workload/training_config.h"

namespace trainsim::workload {

struct MemoryEstimate {
  double weights = 0;
  double gradients = 0;
  double optimizer_states = 0;
  double activations = 0;  // at the peak (end of the forward pass of a micro-batch)
  [[nodiscard]] double total() const { return weights + gradients + optimizer_states + activations; }
};

// Bytes per parameter of weights, gradients and optimizer states.
struct StateBytes {
  double weights = 0;
  double gradients = 0;
  double optimizer = 0;
};
StateBytes state_bytes_per_parameter(const TrainingConfig& training);

// Activation bytes one transformer layer keeps for its backward pass, for one
// micro-batch of b sequences (no tensor or sequence parallelism yet).
double layer_activation_bytes(const ModelConfig& m, const TrainingConfig& t, Recompute r, long long b);
// Embedding dropout mask, final norm and output-layer inputs, fp32 softmax of the loss.
double outside_layers_activation_bytes(const ModelConfig& m, const TrainingConfig& t, long long b);

MemoryEstimate estimate_memory(const ModelConfig& m, const TrainingConfig& t, const ParallelConfig& p);

}  // namespace trainsim::workload
