#pragma once
// Checkpoint file: "TSCKPT01", a little-endian uint64 header length, a JSON header
// (model shape, parameter count, next step, seed), then three fp32 arrays of `params`
// elements: master weights, AdamW m, AdamW v. Written atomically (temporary file, then
// rename). The bf16 compute copy is re-derived from the master weights on load (the
// AdamW kernel writes it as bf16(master) with round-to-nearest-even, so it is identical).
#include <cstdint>
#include <filesystem>
#include <vector>

#include "gpt_layout.h"

namespace trainsim::trainer {

struct CheckpointState {
  kernels::ref::GptConfig model;
  int next_step = 0;  // steps completed
  std::uint64_t seed = 0;
  std::vector<float> params, m, v;
};

void save_checkpoint(const std::filesystem::path& path, const CheckpointState& state);
// Throws std::runtime_error naming the file and the field when the file is not a checkpoint
// of `expected` (the shape must match the run's options exactly).
[[nodiscard]] CheckpointState load_checkpoint(const std::filesystem::path& path,
                                              const kernels::ref::GptConfig& expected);

}  // namespace trainsim::trainer
