#pragma once
// The order in which one pipeline stage runs its forward and backward passes
// (docs/model.md, "Pipeline schedules"): GPipe (Huang et al. 2019), 1F1B
// (PipeDream-Flush; Narayanan et al. 2021) and interleaved 1F1B (Narayanan et
// al., SC'21), following Megatron-LM's schedules.py.
#include <vector>

#include "workload/parallel_config.h"

namespace trainsim::workload {

struct PipelineStep {
  bool forward = true;
  int microbatch = 0;
  int chunk = 0;  // model chunk (virtual stage) on this stage, 0 .. v-1
};

// Steps of stage `stage` of `stages` for `microbatches` micro-batches and `chunks`
// model chunks per stage (v > 1 only with the interleaved schedule, which needs
// microbatches % stages == 0). Throws std::invalid_argument otherwise.
std::vector<PipelineStep> pipeline_steps(PipelineSchedule schedule, int stages, int stage, int microbatches,
                                         int chunks);

}  // namespace trainsim::workload
