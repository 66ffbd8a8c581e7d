#pragma once
// Builds the task graph of training iterations for a layout (docs/model.md,
// "Iteration"). Each replica runs m = global_batch / (micro_batch x dp)
// micro-batches forward and backward (gradient accumulation). Tensor
// parallelism splits every kernel t ways and puts Megatron-LM's f/g collectives
// on the TP stream; pipeline parallelism simulates one rank per stage, running
// its schedule (GPipe, 1F1B, interleaved) with activation and gradient
// transfers between stages on the PP stream. During the last backward pass of
// a stage its gradient buckets are all-reduced over the DP group as soon as they
// are complete (overlap_grad_reduce), then the optimizer steps. ZeRO-1/2
// reduce-scatter the buckets and all-gather the updated parameters; ZeRO-3
// gathers each layer's parameters before it computes (docs/model.md, "Iteration").
#include <vector>

#include "hardware/cluster.h"
#include "workload/model_config.h"
#include "workload/parallel_config.h"
#include "workload/task_graph.h"
#include "workload/training_config.h"

namespace trainsim::workload {

struct IterationGraph {
  TaskGraph graph;
  int iterations = 1;
  long long num_microbatches = 1;
  long long num_gpus = 1;
  long long tokens_per_iteration = 0;
  double model_flops_per_iteration = 0.0;  // the whole job, no recomputation
  double parameters_per_gpu = 0.0;
  int gradient_buckets = 0;
  // Pipeline: decoder layers of each virtual stage (stage s, chunk c at index
  // c x pp + s); uneven splits put the extra layers on the first virtual stages.
  std::vector<long long> layers_per_virtual_stage;
  std::vector<int> simulated_ranks;  // ranks simulated in full
  // Every rank's representative among simulated_ranks: identical data-parallel
  // replicas behave alike, so one stands for all (DESIGN.md, "Scale").
  std::vector<int> representative;
};

// The whole job's work in one iteration: its tokens, and its model FLOPs
// without recomputation (docs/model.md, "MFU").
struct IterationWork {
  long long tokens = 0;
  double model_flops = 0.0;
};
IterationWork iteration_work(const ModelConfig& model, const TrainingConfig& training, const ParallelConfig& parallel);

IterationGraph build_iteration_graph(const ModelConfig& model, const TrainingConfig& training,
                                     const ParallelConfig& parallel, const hw::ClusterSpec& cluster, int iterations);

}  // namespace trainsim::workload
