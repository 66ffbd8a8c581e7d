#pragma once
// One stage rank's iteration while the builder adds it (docs/model.md,
// "Iteration"): what every strategy's emitter reads (the layout, the op lists,
// the stage's groups) and what they leave one another (the gradient buckets of
// the last backward pass, the reductions the optimizer step waits for, the
// first task and outgoing transfer of each pass).
#include <optional>
#include <vector>

#include "workload/activation_offload.h"
#include "workload/gradient_buckets.h"
#include "workload/iteration_layout.h"
#include "workload/pipeline_schedule.h"
#include "workload/stage_emitter.h"
#include "workload/stage_groups.h"
#include "workload/task_graph.h"

namespace trainsim::workload {

// What every stage of every iteration is built from.
struct GraphInputs {
  const IterationLayout& layout;
  const ParallelConfig& parallel;
  CachedOps& ops;
  TaskGraph& graph;
  ActivationOffload* offload = nullptr;  // cpu_offloading; null: off
};

// What a stage carries from one iteration to the next.
struct StageCarry {
  std::optional<TaskId> previous_step;  // the optimizer step
  std::vector<TaskId> pending_gathers;  // what the next iteration's first task waits for
};

// Per (micro-batch, virtual stage) of one iteration: the first task of its
// forward and backward pass and the transfer each sends on; connect() makes
// each pass wait for what the neighbouring virtual stage sends it.
class PassLinks {
 public:
  explicit PassLinks(const IterationLayout& layout);
  void forward(int microbatch, int virtual_stage, TaskId first, std::optional<TaskId> send);
  void backward(int microbatch, int virtual_stage, TaskId first, std::optional<TaskId> send);
  void connect(TaskGraph& graph) const;

 private:
  const IterationLayout& layout_;
  std::vector<TaskId> fwd_first_, bwd_first_, fwd_send_, bwd_send_;
};

struct StageIteration {
  // Starts the iteration: its first task waits for the gathers the last one left
  // pending, and `plan`'s buckets are gathered first (ParameterGates).
  StageIteration(const GraphInputs& in, int stage, int iteration, const StageGroups& groups, StageCarry& carry,
                 PassLinks& links, const std::vector<GradientBucket>& plan);

  const GraphInputs& in;
  int stage;
  int rank;
  int iteration;
  const StageGroups& groups;
  StageCarry& carry;
  PassLinks& links;
  StageEmitter emit;
  BucketFiller grads;  // the gradients of the last backward pass of each chunk
  std::vector<TaskId> reductions;  // what the optimizer step waits for
  ParameterGates gates;            // ZeRO-1/2 with overlap_param_gather
  double zero3_params = 0.0;         // ZeRO-3: the parameters its units reduce, experts included
  double zero3_expert_params = 0.0;  // ... of which expert weights (sharded over the expert group)

  // Counts a backward pass of `step`; true for its chunk's last in the iteration
  // (the pass whose gradients are reduced).
  bool last_backward_of_chunk(const PipelineStep& step);
  // The waits of `unit`'s first forward on the gathers of its parameters.
  void gate(long long unit);

 private:
  std::vector<int> backwards_left_;  // per model chunk
};

}  // namespace trainsim::workload
