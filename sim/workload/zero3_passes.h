#pragma once
// ZeRO-3 (docs/strategies.md, "ZeRO and the distributed optimizer"; pp = 1):
// each unit (the embedding, a decoder layer, the head) gathers its parameters
// before it computes, in the forward and again in the backward pass, the next
// unit's gather prefetched with overlap_param_gather; after a unit's backward
// its gradients are reduce-scattered, every micro-batch.
#include "workload/pipeline_schedule.h"
#include "workload/stage_iteration.h"

namespace trainsim::workload {

void add_zero3_pass(StageIteration& stage, const PipelineStep& step);

}  // namespace trainsim::workload
