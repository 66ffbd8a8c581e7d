#pragma once
// A job on a mixed cluster (hw::GpuPool; docs/model.md, "Heterogeneous jobs"):
// which GPU types each pipeline stage's ranks run on, which one sets the stage's
// pace, and the decoder layers of each stage balanced by the stages' speeds, as
// HetPipe (Park et al., USENIX ATC 2020) and Metis (Um et al., USENIX ATC 2024)
// partition layers by the measured speed of each stage's GPUs.
#include <vector>

#include "hardware/cluster.h"
#include "hardware/compute_model.h"
#include "workload/model_config.h"
#include "workload/parallel_config.h"
#include "workload/training_config.h"
#include "workload/transformer_ops.h"

namespace trainsim::workload {

// The pools (indices into cluster.pools) of each pipeline stage's ranks, in rank
// order (ParallelConfig::rank_order), each stage's list ascending.
std::vector<std::vector<int>> stage_pools(const ParallelConfig& parallel, const hw::ClusterSpec& cluster);

// The pools of data-parallel replica x's ranks on stage s, at [x][s], each ascending.
std::vector<std::vector<std::vector<int>>> replica_pools(const ParallelConfig& parallel,
                                                         const hw::ClusterSpec& cluster);

// Micro-batches of each data-parallel replica when they share `total` in proportion
// to their speed (ParallelConfig::BatchSplit::kProportional): at least one each, the
// rest one at a time to the replica that would finish it first, which minimizes the
// slowest replica's time max_x m_x t_x (t_x: its seconds per micro-batch).
std::vector<long long> proportional_microbatches(long long total, const std::vector<double>& seconds_per_microbatch);

// Compute seconds of one micro-batch's forward and backward (with its
// recomputation) through decoder layers [first, end) of a stage, and the embedding
// or the output layer and loss when the stage holds them, on one GPU type: the
// sum of its kernels' times from `compute` (communication not counted).
struct StageWork {
  long long first = 0;
  long long end = 0;
  bool embedding = false;
  bool head = false;
};
class StageSeconds {
 public:
  StageSeconds(const ModelConfig& model, const TrainingConfig& training, const ParallelConfig& parallel);
  [[nodiscard]] double operator()(const StageWork& work, const hw::ComputeModel& compute) const;
  // Layer l's seconds on `compute` (forward, backward and recomputation).
  [[nodiscard]] double layer(long long l, const hw::ComputeModel& compute) const;

 private:
  TransformerOps ops_;
  hw::Precision precision_;
  Recompute recompute_;
};

// Per stage, the pool whose GPUs take longest for the stage's work: synchronous
// training waits for the slowest rank of each stage (data-parallel replicas of
// different speeds: the fast ones wait at the gradient reduction). `models[k]`
// prices pool k; `stage_layers` are the decoder layers of each stage.
std::vector<int> pacing_pools(const StageSeconds& seconds, const std::vector<std::vector<int>>& pools,
                              const std::vector<long long>& stage_layers,
                              const std::vector<const hw::ComputeModel*>& models);

// The decoder layers of each of the pp stages that minimize the slowest stage's
// time when stage s runs on models[pace[s]] (every stage at least one layer; among
// splits as fast, the one with the least sum of squared stage times). Exact:
// dynamic programming over the contiguous splits, O(pp L^2).
std::vector<long long> speed_balanced_layers(const StageSeconds& seconds, long long layers,
                                             const std::vector<int>& pace,
                                             const std::vector<const hw::ComputeModel*>& models);

}  // namespace trainsim::workload
