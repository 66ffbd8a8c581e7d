#pragma once
// The measured-run file trainsim-train writes and `trainsim validate` reads (RUN.json,
// format "trainsim-measured-run" version 1; docs/validation.md "Running trainsim-train"),
// and its timeline in the simulator's format (DESIGN.md "Timeline file"). Plain C++.
#include <array>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "options.h"
#include "config/kernel_class_names.h"

namespace trainsim::trainer {

// The kernel classes of RUN.json, in file order (shared with trainsim validate).
using config::kKernelClasses;
// Index of a class name; throws std::invalid_argument for an unknown one.
[[nodiscard]] std::size_t kernel_class_index(std::string_view name);

struct StepRecord {
  int step = 0;
  double time_s = 0.0;
  double loss = 0.0;
  long long tokens = 0;
};

struct StepStats {
  double median = 0.0, mean = 0.0, min = 0.0, max = 0.0;
  int steps_timed = 0;
};
// Statistics over the steps whose index is >= warmup_steps (median of an even count: the
// mean of the two middle values).
[[nodiscard]] StepStats step_stats(const std::vector<StepRecord>& steps, int warmup_steps);

struct TimelineSpan {
  int rank = 0;
  std::string stream;    // "compute" or "dp_comm"
  std::string category;  // forward, backward, optimizer, all_reduce
  std::string name;      // the simulator's op names: "layer3.mlp_up", "layer3.mlp_up.backward", ...
  double start = 0.0, end = 0.0;  // seconds from the start of the recorded step
  int iteration = 0, microbatch = -1, layer = -1;
};

struct DeviceInfo {
  std::string name, driver, cuda, cublas, nccl;
  int count = 1, nodes = 1;
};

struct MeasuredRun {
  std::string tool = "trainsim-train 0.1";
  std::string date;  // ISO 8601 UTC
  TrainOptions options;
  DeviceInfo device;
  int data_parallel = 1;  // ranks in all = gpus_per_node * nodes
  int gpus_per_node = 1;
  std::vector<StepRecord> steps;
  std::array<double, kKernelClasses.size()> kernel_class_s{};  // mean GPU time per timed step
  double peak_memory_bytes = 0.0;
  std::string peak_memory_source;
  double held_out_loss = 0.0;
  long long held_out_tokens = 0;
  std::vector<TimelineSpan> spans;  // empty: no timeline file
};

// Writes RUN.json at `path` and, when run.spans is not empty, STEM.timeline.json beside it
// (both atomically). Throws io::OutputError naming the file.
void write_measured_run(const std::filesystem::path& path, const MeasuredRun& run);
// "RUN.json" -> "RUN.timeline.json" (same folder).
[[nodiscard]] std::filesystem::path timeline_path_for(const std::filesystem::path& run_path);

}  // namespace trainsim::trainer
