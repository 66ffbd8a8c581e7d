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

int model_chunks(long long layers, const ParallelConfig& parallel) {
  if (!parallel.layers_per_virtual_stage) return 1;
  // Uneven splits (126 layers on 16 stages, as Llama 3 405B): the fullest stage
  // sets the chunks, and split_layers() leaves the last virtual stages a layer short.
  const long long per_stage = (layers + parallel.pipeline - 1) / parallel.pipeline;
  if (per_stage % *parallel.layers_per_virtual_stage != 0)
    throw std::invalid_argument("layers per virtual stage must divide the layers of each stage");
  return static_cast<int>(per_stage / *parallel.layers_per_virtual_stage);
}

std::vector<long long> split_layers(long long layers, int n) {
  std::vector<long long> out(static_cast<std::size_t>(n), layers / n);
  for (long long i = 0; i < layers % n; ++i) ++out[static_cast<std::size_t>(i)];
  return out;
}

}  // namespace trainsim::workload

