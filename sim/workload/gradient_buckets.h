#pragma once
// Gradient buckets (docs/model.md, "Iteration"): in the last backward pass of
// an iteration a stage's weight gradients fill buckets of bucket_size
// parameters in the order the backward ops complete them, dense and expert
// weights apart (Megatron-LM's separate buffers); with overlap_grad_reduce each
// full bucket is reduced over its data-parallel group as soon as its last
// gradient is ready. ZeRO-1/2 gather the updated parameters bucket by bucket:
// Megatron-LM's param and grad buffers share one bucket layout.
#include <map>
#include <vector>

#include "workload/iteration_layout.h"
#include "workload/pipeline_schedule.h"
#include "workload/stage_emitter.h"
#include "workload/task_graph.h"

namespace trainsim::workload {

// The units whose parameters a ZeRO gather covers: decoder layers by index,
// and these two outside them.
inline constexpr long long kEmbeddingUnit = -1;
inline constexpr long long kHeadUnit = -2;

struct GradientBucket {
  double params = 0.0;
  double fp8_params = 0.0;       // of which weights of fp8 GEMMs (gathered as fp8 with fp8_param_gather)
  std::vector<long long> units;  // the units whose gradients it holds, in backward order
  TaskId ready_after = 0;        // the backward task that completes its last gradient
  bool expert = false;           // expert weights: reduced over the expert data-parallel group
};

// Fills buckets as the backward ops complete their gradients.
class BucketFiller {
 public:
  // Buckets close at `limit` parameters, the first at `first_limit`.
  BucketFiller(double limit, double first_limit);
  // The backward ops `ops` of `unit` ran as tasks `done` (StageEmitter::add's ids).
  void add(const std::vector<Op>& ops, long long unit, const std::vector<TaskId>& done);
  // The full buckets in the order they filled, then the open dense and expert ones.
  [[nodiscard]] std::vector<GradientBucket> finish();
  [[nodiscard]] double params() const { return params_; }  // every gradient added
  [[nodiscard]] double expert_params() const { return expert_params_; }

 private:
  double limit_;
  double first_limit_;
  double params_ = 0.0;
  double expert_params_ = 0.0;
  std::vector<GradientBucket> full_;
  GradientBucket open_[2];  // dense, expert
};

// The buckets stage `stage`'s last backward passes form (the walk the builder
// makes when it adds them), before any task exists: ZeRO-1/2 with
// overlap_param_gather gather the previous update by them.
std::vector<GradientBucket> plan_buckets(const IterationLayout& layout, PipelineSchedule schedule, CachedOps& ops,
                                         int stage);

// A collective of a stage rank on the data-parallel stream.
Task data_parallel_task(TaskGraph& graph, std::string name, Role role, net::Collective collective, int rank,
                        int iteration);

// ZeRO: an all-gather of parameters, `bytes` of them, over `group`.
Task parameter_gather(TaskGraph& graph, std::string name, double bytes, const net::CommGroup& group, int rank,
                      int iteration);
// The bytes a bucket's parameters are gathered in: weight_bytes each, fp8 GEMMs'
// weights fp8_gather_bytes (docs/model.md, "FP8 recipes").
double gather_bytes(const GradientBucket& bucket, const IterationLayout& layout);

// ZeRO-1/2 with overlap_param_gather (Megatron-LM): the previous update's
// gathers run bucket by bucket in forward order at the start of the iteration,
// after the previous optimizer step; a unit's first forward waits for the
// buckets holding it.
class ParameterGates {
 public:
  ParameterGates() = default;
  ParameterGates(TaskGraph& graph, const std::vector<GradientBucket>& plan, std::optional<TaskId> previous_step,
                 const IterationLayout& layout, const StageGroups& groups, int rank, int iteration);
  // The gathers `unit` waits for, the first time it is asked; then none.
  [[nodiscard]] std::vector<TaskId> take(long long unit);

 private:
  std::map<long long, std::vector<TaskId>> gathers_;
};

// The data-parallel reduction of each bucket: all-reduce, or reduce-scatter
// when the optimizer is sharded (ZeRO-1/2, the distributed optimizer: each rank
// keeps the reduced gradients of its 1/dp shard). A bucket starts when its last
// gradient is ready (overlap_grad_reduce), else after the whole backward pass.
std::vector<TaskId> add_gradient_reductions(TaskGraph& graph, const std::vector<GradientBucket>& buckets,
                                            const IterationLayout& layout, bool overlap, const StageGroups& groups,
                                            TaskId last_backward, int rank, int iteration);

// ZeRO-1/2 without overlap_param_gather: the updated parameters gathered right
// after the optimizer step, in forward order.
std::vector<TaskId> add_gathers_after_step(TaskGraph& graph, const std::vector<GradientBucket>& buckets,
                                           const IterationLayout& layout, const StageGroups& groups, TaskId step,
                                           int rank, int iteration);

}  // namespace trainsim::workload
