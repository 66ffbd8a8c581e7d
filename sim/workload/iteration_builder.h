#pragma once
// Builds the task graph of training iterations for a layout. Data parallelism:
// each replica runs m = global_batch / (micro_batch x dp) micro-batches forward
// and backward (gradient accumulation); during the last backward pass gradient
// buckets are all-reduced on the DP stream as soon as they are complete
// (overlap_grad_reduce), then the optimizer steps (docs/model.md, "Iteration").
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
  std::vector<int> simulated_ranks;  // ranks simulated in full
  // Every rank's representative among simulated_ranks: identical data-parallel
  // replicas behave alike, so one stands for all (DESIGN.md, "Scale").
  std::vector<int> representative;
};

IterationGraph build_iteration_graph(const ModelConfig& model, const TrainingConfig& training,
                                     const ParallelConfig& parallel, const hw::ClusterSpec& cluster, int iterations);

}  // namespace trainsim::workload
