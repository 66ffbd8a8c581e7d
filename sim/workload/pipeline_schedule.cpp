#include "workload/pipeline_schedule.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace trainsim::workload {

namespace {

// Megatron-LM's interleaved order: virtual micro-batch k runs chunk
// (k mod (p v)) / p of micro-batch (k / (p v)) p + k mod p; backward passes
// take the chunks from the last.
PipelineStep interleaved_step(bool forward, int k, int p, int v) {
  const int group = k % (p * v);
  int chunk = group / p;
  if (!forward) chunk = v - 1 - chunk;
  return {forward, (k / (p * v)) * p + k % p, chunk};
}

}  // namespace

std::vector<PipelineStep> pipeline_steps(PipelineSchedule schedule, int stages, int stage, int microbatches,
                                         int chunks) {
  const int p = stages;
  const int m = microbatches;
  if (p < 1 || stage < 0 || stage >= p || m < 1 || chunks < 1)
    throw std::invalid_argument("pipeline schedule: stages, stage, micro-batches and chunks out of range");
  if (chunks > 1 && schedule != PipelineSchedule::kInterleaved1F1B)
    throw std::invalid_argument("pipeline schedule: model chunks need the interleaved schedule");
  std::vector<PipelineStep> steps;
  steps.reserve(static_cast<std::size_t>(2 * m * chunks));
  if (schedule == PipelineSchedule::kGpipe) {
    for (int i = 0; i < m; ++i) steps.push_back({true, i, 0});
    for (int i = 0; i < m; ++i) steps.push_back({false, i, 0});
    return steps;
  }
  if (schedule == PipelineSchedule::k1F1B) {
    const int warmup = std::min(p - stage - 1, m);
    for (int i = 0; i < warmup; ++i) steps.push_back({true, i, 0});
    for (int i = 0; i < m - warmup; ++i) {
      steps.push_back({true, warmup + i, 0});
      steps.push_back({false, i, 0});
    }
    for (int i = m - warmup; i < m; ++i) steps.push_back({false, i, 0});
    return steps;
  }
  if (m % p != 0)
    throw std::invalid_argument("interleaved schedule: " + std::to_string(m) +
                                " micro-batches are not a multiple of the " + std::to_string(p) + " stages");
  const int v = chunks;
  const int total = m * v;
  const int warmup = m == p ? total : std::min((p - stage - 1) * 2 + (v - 1) * p, total);
  for (int k = 0; k < warmup; ++k) steps.push_back(interleaved_step(true, k, p, v));
  for (int i = 0; i < total - warmup; ++i) {
    steps.push_back(interleaved_step(true, warmup + i, p, v));
    steps.push_back(interleaved_step(false, i, p, v));
  }
  for (int k = total - warmup; k < total; ++k) steps.push_back(interleaved_step(false, k, p, v));
  return steps;
}

std::vector<CombinedStep> combined_1f1b_steps(int stages, int stage, int microbatches, int chunks) {
  const int p = stages;
  const int m = microbatches;
  const int v = chunks;
  if (p < 1 || stage < 0 || stage >= p || m < 1 || v < 1)
    throw std::invalid_argument("combined 1F1B: stages, stage, micro-batches and chunks out of range");
  if (p > 1 && v < 2)
    throw std::invalid_argument("combined 1F1B with pipeline parallelism needs virtual pipeline stages");
  if (m % p != 0)
    throw std::invalid_argument("combined 1F1B: " + std::to_string(m) + " micro-batches are not a multiple of the " +
                                std::to_string(p) + " stages");
  const int total = m * v;
  // Megatron-Core's warm-up plus one, so that a combined pass's forward and backward
  // never wait on each other.
  const int warmup = std::min((p - stage - 1) * 2 + (v - 1) * p + 1, total);
  std::vector<CombinedStep> steps;
  steps.reserve(static_cast<std::size_t>(total + 1));
  for (int k = 0; k < warmup; ++k) steps.push_back({interleaved_step(true, k, p, v), std::nullopt});
  for (int i = 0; i < total - warmup; ++i)
    steps.push_back({interleaved_step(true, warmup + i, p, v), interleaved_step(false, i, p, v)});
  for (int k = total - warmup; k < total; ++k) steps.push_back({std::nullopt, interleaved_step(false, k, p, v)});
  return steps;
}

std::vector<PipelineStep> pass_order(const ParallelConfig& parallel, int stages, int stage, int microbatches,
                                     int chunks) {
  if (!parallel.expert_a2a_overlap) return pipeline_steps(parallel.schedule, stages, stage, microbatches, chunks);
  std::vector<PipelineStep> out;
  for (const CombinedStep& step : combined_1f1b_steps(stages, stage, microbatches, chunks)) {
    if (step.backward) out.push_back(*step.backward);
    if (step.forward) out.push_back(*step.forward);
  }
  return out;
}

namespace {

std::string text(long long v) { return std::to_string(v); }

// Layers of each pipeline stage under decoder_first/last_pipeline_num_layers.
std::vector<long long> uneven_stage_layers(long long layers, const ParallelConfig& p) {
  if (p.embedding_in_split || p.loss_in_split)
    throw PipelineSplitError(p.first_stage_layers ? "decoder_first_pipeline_num_layers"
                                                  : "decoder_last_pipeline_num_layers",
                             "decoder_first/last_pipeline_num_layers cannot be combined with "
                             "account_for_embedding/loss_in_pipeline_split (Megatron-Core refuses it too)");
  const std::string key =
      p.first_stage_layers ? "decoder_first_pipeline_num_layers" : "decoder_last_pipeline_num_layers";
  if (p.pipeline < 2) throw PipelineSplitError(key, key + " needs pipeline_model_parallel_size >= 2");
  long long rest = layers;
  int others = p.pipeline;
  if (p.first_stage_layers) rest -= *p.first_stage_layers, --others;
  if (p.last_stage_layers) rest -= *p.last_stage_layers, --others;
  if (rest < 0 || (others == 0 && rest != 0) || (others > 0 && rest % others != 0))
    throw PipelineSplitError(
        key, "the " + text(rest) + " layers left after the first and last stages (num_layers " + text(layers) +
                 ") must divide evenly over the other " + text(others) + " stages");
  std::vector<long long> stage(static_cast<std::size_t>(p.pipeline), others > 0 ? rest / others : 0);
  if (p.first_stage_layers) stage.front() = *p.first_stage_layers;
  if (p.last_stage_layers) stage.back() = *p.last_stage_layers;
  return stage;
}

// Layers of each pipeline stage with the embedding and the loss counted in the split.
std::vector<long long> accounted_stage_layers(long long layers, const ParallelConfig& p) {
  const long long counted = layers + (p.embedding_in_split ? 1 : 0) + (p.loss_in_split ? 1 : 0);
  if (counted % p.pipeline != 0)
    throw PipelineSplitError(p.embedding_in_split ? "account_for_embedding_in_pipeline_split"
                                                  : "account_for_loss_in_pipeline_split",
                             "num_layers " + text(layers) + " plus the embedding and loss counted in the split (" +
                                 text(counted) + ") must divide by pipeline_model_parallel_size " +
                                 text(p.pipeline));
  return std::vector<long long>(static_cast<std::size_t>(p.pipeline), counted / p.pipeline);
}

}  // namespace

int model_chunks(long long layers, const ParallelConfig& parallel) {
  if (!parallel.layout_stage_layers.empty()) {
    const std::string key = "pipeline_model_parallel_layout";
    if (parallel.layers_per_virtual_stage || parallel.first_stage_layers || parallel.last_stage_layers ||
        parallel.embedding_in_split || parallel.loss_in_split)
      throw PipelineSplitError(key, "pipeline_model_parallel_layout places every layer itself: give it without "
                                    "num_layers_per_virtual_pipeline_stage, decoder_first/last_pipeline_num_layers "
                                    "and account_for_embedding/loss_in_pipeline_split");
    const auto stages = static_cast<long long>(parallel.layout_stage_layers.size());
    if (stages % parallel.pipeline != 0)
      throw PipelineSplitError(key, "pipeline_model_parallel_layout has " + text(stages) +
                                        " stages, which pipeline_model_parallel_size " + text(parallel.pipeline) +
                                        " does not divide");
    const long long chunks = stages / parallel.pipeline;
    if (parallel.virtual_stages_per_rank && *parallel.virtual_stages_per_rank != chunks)
      throw PipelineSplitError("virtual_pipeline_model_parallel_size",
                               "virtual_pipeline_model_parallel_size (" + text(*parallel.virtual_stages_per_rank) +
                                   ") is not the layout's " + text(stages) + " stages / pipeline_model_parallel_size " +
                                   text(parallel.pipeline) + " = " + text(chunks));
    return static_cast<int>(chunks);
  }
  if (parallel.virtual_stages_per_rank) {
    if (parallel.layers_per_virtual_stage)
      throw PipelineSplitError("virtual_pipeline_model_parallel_size",
                               "give virtual_pipeline_model_parallel_size or num_layers_per_virtual_pipeline_stage, "
                               "not both");
    return *parallel.virtual_stages_per_rank;
  }
  if (!parallel.layers_per_virtual_stage) return 1;
  const std::string key = "num_layers_per_virtual_pipeline_stage";
  if (parallel.first_stage_layers || parallel.last_stage_layers)
    throw PipelineSplitError(key, "with decoder_first/last_pipeline_num_layers the stages hold different numbers "
                                  "of layers: give the chunks per stage as virtual_pipeline_model_parallel_size");
  // Counted in the split, the embedding and loss make every stage (L + e + l) / pp;
  // otherwise (uneven splits as 126 layers on 16 stages) the fullest stage sets the
  // chunks and the last virtual stages are a layer short.
  const long long per_stage = parallel.custom_split() ? accounted_stage_layers(layers, parallel).front()
                                                      : (layers + parallel.pipeline - 1) / parallel.pipeline;
  if (per_stage % *parallel.layers_per_virtual_stage != 0)
    throw PipelineSplitError(key, key + " (" + text(*parallel.layers_per_virtual_stage) +
                                      ") must divide the " + text(per_stage) + " layers of each pipeline stage");
  return static_cast<int>(per_stage / *parallel.layers_per_virtual_stage);
}

std::vector<long long> virtual_stage_layers(long long layers, const ParallelConfig& parallel) {
  const int pp = parallel.pipeline;
  const int chunks = model_chunks(layers, parallel);
  const int n = pp * chunks;
  std::vector<long long> out(static_cast<std::size_t>(n), 0);
  if (!parallel.layout_stage_layers.empty()) {  // Megatron-Core's layout, as given
    out = parallel.layout_stage_layers;
    long long sum = 0;
    for (const long long l : out) sum += l;
    if (sum != layers)
      throw PipelineSplitError("pipeline_model_parallel_layout", "pipeline_model_parallel_layout places " + text(sum) +
                                                                     " decoder layers ('t'); the model has num_layers " +
                                                                     text(layers));
  } else if (!parallel.custom_split()) {  // trainsim's even split
    for (int j = 0; j < n; ++j) out[static_cast<std::size_t>(j)] = layers / n + (j < layers % n ? 1 : 0);
  } else {
    const std::vector<long long> stage = parallel.first_stage_layers || parallel.last_stage_layers
                                             ? uneven_stage_layers(layers, parallel)
                                             : accounted_stage_layers(layers, parallel);
    for (int s = 0; s < pp; ++s) {
      const long long count = stage[static_cast<std::size_t>(s)];
      if (count % chunks != 0)
        throw PipelineSplitError(parallel.virtual_stages_per_rank ? "virtual_pipeline_model_parallel_size"
                                                                  : "pipeline_model_parallel_size",
                                 "pipeline stage " + text(s) + " holds " + text(count) +
                                     " layers, which do not divide into its " + text(chunks) + " model chunks");
      for (int c = 0; c < chunks; ++c) out[static_cast<std::size_t>(c * pp + s)] = count / chunks;
    }
    if (parallel.embedding_in_split) out.front() -= 1;
    if (parallel.loss_in_split) out.back() -= 1;
  }
  const std::string key = !parallel.layout_stage_layers.empty() ? "pipeline_model_parallel_layout"
                          : parallel.virtual_stages_per_rank ? "virtual_pipeline_model_parallel_size"
                          : parallel.layers_per_virtual_stage ? "num_layers_per_virtual_pipeline_stage"
                                                              : "pipeline_model_parallel_size";
  if (!parallel.custom_split() && layers < n)
    throw PipelineSplitError(
        key, text(n) + " virtual stages (" + text(chunks) + " per pipeline stage x pipeline_model_parallel_size " +
                 text(pp) + ") for " + text(layers) + " layers: " + text(n - layers) +
                 " would hold no layer; use fewer, or count the embedding and the loss in the split as "
                 "Megatron-LM does (account_for_embedding_in_pipeline_split, account_for_loss_in_pipeline_split)");
  for (int j = 0; j < n; ++j) {
    const long long held = out[static_cast<std::size_t>(j)];
    // The first and last virtual stages of a Megatron-Core split may hold only the
    // embedding or the loss.
    const bool extra = j == 0 || j == n - 1;
    if (held < 0 || (held == 0 && !extra))
      throw PipelineSplitError(key, "virtual stage " + text(j) + " (stage " + text(j % pp) + ", chunk " +
                                        text(j / pp) + ") would hold " +
                                        (held < 0 ? "fewer than no layers" : "no layer, nor the embedding or the loss") +
                                        " (" + text(layers) + " layers over " + text(n) + " virtual stages)");
  }
  return out;
}

std::vector<long long> stage_layer_indices(long long layers, const ParallelConfig& parallel, int stage) {
  const std::vector<long long> per_virtual = virtual_stage_layers(layers, parallel);
  std::vector<long long> out;
  long long first = 0;
  for (std::size_t v = 0; v < per_virtual.size(); ++v) {
    if (static_cast<int>(v % static_cast<std::size_t>(parallel.pipeline)) == stage)
      for (long long l = first; l < first + per_virtual[v]; ++l) out.push_back(l);
    first += per_virtual[v];
  }
  return out;
}

}  // namespace trainsim::workload
