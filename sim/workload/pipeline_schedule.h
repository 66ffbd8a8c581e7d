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

// Model chunks per stage: the stage's layers / num_layers_per_virtual_pipeline_stage
// (1 without it). Throws std::invalid_argument when that does not divide evenly.
int model_chunks(long long layers, const ParallelConfig& parallel);

// Decoder layers of each of `n` virtual stages (stage s, chunk c at index c pp + s):
// L / n each, the remainder one more on the first ones.
std::vector<long long> split_layers(long long layers, int n);

}  // namespace trainsim::workload
