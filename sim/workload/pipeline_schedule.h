#pragma once
// The order in which one pipeline stage runs its forward and backward passes
// (docs/model.md, "Pipeline schedules"): GPipe (Huang et al. 2019), 1F1B
// (PipeDream-Flush; Narayanan et al. 2021) and interleaved 1F1B (Narayanan et
// al., SC'21), following Megatron-LM's schedules.py.
#include <optional>
#include <stdexcept>
#include <string>
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

// One pass of Megatron-Core's combined 1F1B (overlap_moe_expert_parallel_comm;
// docs/model.md, "All-to-alls beside another micro-batch"): a forward, a backward,
// or one micro-batch's forward run together with another's backward.
struct CombinedStep {
  std::optional<PipelineStep> forward;
  std::optional<PipelineStep> backward;
};

// The combined 1F1B of stage `stage`: the interleaved order with one more warm-up
// forward (get_pp_rank_microbatches), each steady-state forward and backward one
// pass (forward_backward_helper_wrapper). Without pipelining (stages 1, chunks 1)
// this is combined_1f1b_schedule_for_no_pipelining: the first forward alone, each
// next forward with the backward before it, the last backward alone. More than one
// stage needs more than one chunk (Megatron-Core asserts virtual stages) and
// micro-batches a multiple of the stages; throws std::invalid_argument otherwise.
std::vector<CombinedStep> combined_1f1b_steps(int stages, int stage, int microbatches, int chunks);

// The passes of stage `stage` in the order they run, a combined pass as its
// backward then its forward (what the memory estimate counts in flight).
std::vector<PipelineStep> pass_order(const ParallelConfig& parallel, int stages, int stage, int microbatches,
                                     int chunks);

// An impossible pipeline split; `key` is the scenario key to name.
struct PipelineSplitError : std::invalid_argument {
  PipelineSplitError(std::string key_, const std::string& what) : std::invalid_argument(what), key(std::move(key_)) {}
  std::string key;
};

// Model chunks per stage: virtual_pipeline_model_parallel_size, or the stage's layers /
// num_layers_per_virtual_pipeline_stage (1 without either). Throws PipelineSplitError
// when that does not divide evenly.
int model_chunks(long long layers, const ParallelConfig& parallel);

// Decoder layers of each virtual stage (stage s, chunk c at index c pp + s), as
// Megatron-Core's get_num_layers_to_build places them (docs/strategies.md, "Uneven
// pipeline stages"): with decoder_first/last_pipeline_num_layers, those on the first
// and last stage and the rest evenly over the others; with the embedding and the loss
// counted in the split, (L + e + l) / pp per stage, a chunk's share less the embedding
// on the first virtual stage and the loss on the last; with neither, trainsim's own even
// split, L / n each and the remainder one more on the first ones. Every stage's layers
// divide into its chunks, and every virtual stage holds a layer, the embedding or the
// loss. Throws PipelineSplitError otherwise.
std::vector<long long> virtual_stage_layers(long long layers, const ParallelConfig& parallel);

// The model's layer indices (0-based) that pipeline stage `stage` holds, chunk by
// chunk: virtual stage v = c pp + s holds the layers after those of v' < v.
std::vector<long long> stage_layer_indices(long long layers, const ParallelConfig& parallel, int stage);

}  // namespace trainsim::workload
