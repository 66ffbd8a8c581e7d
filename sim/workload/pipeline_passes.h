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

}  // namespace trainsim::workload
