#pragma once
// A virtual stage's forward or backward pass of one micro-batch on its stage
// rank (docs/model.md, "Iteration" and "Pipeline schedules"): the embedding on
// the first virtual stage, its decoder layers, the head on the last, and the
// activations (forward) or their gradients (backward) sent on to the
// neighbouring virtual stage's rank on the pipeline stream.
#include <string>

#include "workload/pipeline_schedule.h"
#include "workload/stage_iteration.h"

namespace trainsim::workload {

// The activations (forward) or gradients (backward) of `step` sent on the pipeline
// stream to `pair`, after the last task emitted so far.
TaskId add_pipeline_send(StageIteration& stage, const PipelineStep& step, std::string name, Role role,
                         const net::CommGroup& pair);

void add_forward_pass(StageIteration& stage, const PipelineStep& step);

// Recomputation before each layer's backward; the chunk's last backward pass of
// the iteration fills the gradient buckets.
void add_backward_pass(StageIteration& stage, const PipelineStep& step);

// overlap_moe_expert_parallel_comm (Megatron-Core's combined 1F1B; docs/model.md,
// "All-to-alls beside another micro-batch"): the passes of combined_1f1b_steps, each
// steady-state forward run together with a backward, layer by layer.
void add_expert_overlap_schedule(StageIteration& stage);

}  // namespace trainsim::workload
