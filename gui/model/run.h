#pragma once
// One opened run: the simulator's RESULT.json with the timeline beside it, or a
// timeline file alone (the trainer's measured runs have no result file).
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "model/timeline_data.h"

namespace trainsim::gui {

// The result file's keys the GUI shows (docs/results.md, "Result file").
struct ResultSummary {
  std::string scenario;
  int num_gpus = 0;
  double iteration_time_s = 0.0;
  double tokens_per_s = 0.0;
  double model_flops_per_iteration = 0.0;
  double tflops_per_gpu = 0.0;
  double mfu = 0.0;
  double peak_flops_per_gpu = 0.0;
  std::vector<std::pair<std::string, double>> breakdown_s;  // in file order
  double peak_bytes_per_gpu = 0.0;
  double capacity_bytes_per_gpu = 0.0;
  bool fits = true;
  std::optional<double> time_to_train_s;
  std::optional<double> cost_usd;
  std::optional<double> energy_kwh;
  double goodput = 1.0;
  double expected_interruptions = 0.0;
  std::string timeline;  // file name, in the result file's folder
  std::string run_timeline;  // reliability.run_timeline: the full-run timeline's file name (failures), or empty
};

struct Run {
  std::string label;  // file name shown in tabs and legends
  std::filesystem::path path;
  std::optional<ResultSummary> result;
  std::shared_ptr<const TimelineData> timeline;
  // The whole run of a result with failures (trial 0: training, checkpoints,
  // failures, restarts on one "job" lane, days long), or null.
  std::shared_ptr<const TimelineData> run_timeline;
};

// Reads RESULT.json (then its "timeline" and "run_timeline" beside it) or a
// timeline file: the file's "format" key tells which. Any of them may be
// gzip-compressed. Throws ReadError.
Run load_run(const std::filesystem::path& path);
ResultSummary parse_result_text(std::string_view text, std::string_view source);

}  // namespace trainsim::gui
