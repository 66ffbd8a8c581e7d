#pragma once
// One opened run: the simulator's RESULT.json with the timeline beside it, the
// trainer's measured run (RUN.json, docs/validation.md) with its timeline, or a
// timeline file alone.
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "model/timeline_data.h"

namespace trainsim::gui {

// What a measured run (RUN.json) says beyond the figures both kinds share.
struct MeasuredFigures {
  std::string device;
  std::string tool;
  double step_min_s = 0.0;
  double step_max_s = 0.0;
  long long steps_timed = 0;
  std::optional<double> loss_initial;
  std::optional<double> loss_final;
  std::optional<double> loss_held_out;
  std::string peak_memory_source;
};

// The result file's keys the GUI shows (docs/results.md, "Result file"). A
// measured run fills the ones it measures: the GPUs, the step time (median) as
// the iteration time, tokens/s, the time per kernel class as the breakdown and
// the peak memory; model FLOPs, MFU, cost and energy stay 0 or empty.
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
  std::optional<MeasuredFigures> measured;  // a measured run (RUN.json), not a prediction
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

// Reads RESULT.json (then its "timeline" and "run_timeline" beside it), a
// measured run RUN.json (then its "timeline") or a timeline file: the file's
// "format" key tells which. Any of them may be gzip-compressed. Throws ReadError
// (for a measured run with the scenario reader's message: file, field, expected).
Run load_run(const std::filesystem::path& path);
ResultSummary parse_result_text(std::string_view text, std::string_view source);
ResultSummary parse_measured_run_text(std::string_view text, const std::string& source);

}  // namespace trainsim::gui
