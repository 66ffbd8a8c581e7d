#pragma once
// A virtual stage's forward or backward pass of one micro-batch on its stage
// rank (docs/model.md, "Iteration" and "Pipeline schedules"): the embedding on
// the first virtual stage, its decoder layers, the head on the last, and the
// activations (forward) or their gradients (backward) sent on to the
// neighbouring virtual stage's rank on the pipeline stream.
#include "workload/pipeline_schedule.h"
#include "workload/stage_iteration.h"

namespace trainsim::workload {

void add_forward_pass(StageIteration& stage, const PipelineStep& step);

// Recomputation before each layer's backward; the chunk's last backward pass of
// the iteration fills the gradient buckets.
void add_backward_pass(StageIteration& stage, const PipelineStep& step);

// overlap_moe_expert_parallel_comm without pipeline parallelism (Megatron-Core's
// combined_1f1b_schedule_for_no_pipelining; docs/model.md, "All-to-alls beside
// another micro-batch"): the first micro-batch's forward alone, then each next
// forward together with the backward of the one before it, then the last backward.
void add_expert_overlap_schedule(StageIteration& stage);

}  // namespace trainsim::workload
