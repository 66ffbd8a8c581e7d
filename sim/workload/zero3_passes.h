#pragma once
// ZeRO-3 (docs/strategies.md, "ZeRO and the distributed optimizer"; pp = 1):
// each unit (the embedding, a decoder layer, the head) gathers its parameters
// before it computes, in the forward and again in the backward pass, the next
// unit's gather prefetched with overlap_param_gather; after a unit's backward
// its gradients are reduce-scattered, every micro-batch.
#include <string_view>

#include "workload/pipeline_schedule.h"
#include "workload/stage_iteration.h"

namespace trainsim::workload {

// The names' suffixes of FSDP2's copies around the eager program's collectives:
// `<unit>.fsdp_copy_out.{forward,backward}` and `<unit>.fsdp_chunk_cat`.
inline constexpr std::string_view kFsdpCopyOut = ".fsdp_copy_out";
inline constexpr std::string_view kFsdpChunkCat = ".fsdp_chunk_cat";

void add_zero3_pass(StageIteration& stage, const PipelineStep& step);

}  // namespace trainsim::workload
