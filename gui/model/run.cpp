#include "model/run.h"

#include <sstream>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/kernel_class_names.h"
#include "model/timeline_reader.h"
#include "report/trace_timeline.h"
#include "report/result_keys.h"
#include "scenario/errors.h"
#include "scenario/measured_run.h"
#include "scenario/torch_trace.h"

namespace trainsim::gui {

namespace {

using json = nlohmann::json;

double number_at(const json& j, const char* key, std::string_view source) {
  const auto it = j.find(key);
  if (it == j.end() || !it->is_number())
    throw ReadError(std::string(source) + ": /" + key + ": expected a number");
  return it->get<double>();
}

std::optional<double> optional_number(const json& j, const char* key) {
  const auto it = j.find(key);
  if (it == j.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

}  // namespace

ResultSummary parse_result_text(std::string_view text, std::string_view source) {
  using namespace report::result_key;
  const json j = json::parse(text.begin(), text.end(), nullptr, false);
  if (j.is_discarded() || !j.is_object()) throw ReadError(std::string(source) + ": not a JSON object");
  ResultSummary r;
  r.scenario = j.value(kScenario, std::string{});
  r.num_gpus = static_cast<int>(number_at(j, kNumGpus, source));
  r.iteration_time_s = number_at(j, kIterationTime, source);
  r.tokens_per_s = number_at(j, kTokensPerS, source);
  r.model_flops_per_iteration = number_at(j, kModelFlops, source);
  r.tflops_per_gpu = number_at(j, kTflopsPerGpu, source);
  r.mfu = number_at(j, kMfu, source);
  r.peak_flops_per_gpu = optional_number(j, kPeakFlopsPerGpu).value_or(0.0);
  if (const auto b = j.find(kBreakdown); b != j.end() && b->is_object())
    for (const auto& [k, v] : b->items())
      if (v.is_number()) r.breakdown_s.emplace_back(k, v.get<double>());
  if (const auto m = j.find(kMemory); m != j.end() && m->is_object()) {
    r.peak_bytes_per_gpu = optional_number(*m, kPeakBytes).value_or(0.0);
    r.capacity_bytes_per_gpu = optional_number(*m, kCapacityBytes).value_or(0.0);
    r.fits = m->value(kFits, true);
  }
  r.time_to_train_s = optional_number(j, kTimeToTrain);
  r.cost_usd = optional_number(j, kCost);
  r.energy_kwh = optional_number(j, kEnergy);
  if (const auto rel = j.find(kReliability); rel != j.end() && rel->is_object()) {
    r.goodput = optional_number(*rel, kGoodput).value_or(1.0);
    r.expected_interruptions = optional_number(*rel, kExpectedInterruptions).value_or(0.0);
    if (const auto t = rel->find(kRunTimeline); t != rel->end() && t->is_string())
      r.run_timeline = t->get<std::string>();
  }
  if (const auto t = j.find(kTimeline); t != j.end() && t->is_string()) r.timeline = t->get<std::string>();

  return r;
}

namespace {

// What every measured run shows: its step, its kernel classes and how it was measured.
ResultSummary measured_summary(const scenario::MeasuredRun& m, std::string label) {
  ResultSummary r;
  r.scenario = std::move(label);
  r.iteration_time_s = m.step_median_s;
  for (std::size_t i = 0; i < config::kKernelClasses.size(); ++i)
    r.breakdown_s.emplace_back(std::string(config::kKernelClasses[i]), m.kernel_class_s[i]);
  MeasuredFigures f;
  f.device = m.device_name;
  f.tool = m.tool;
  f.step_min_s = m.step_min_s;
  f.step_max_s = m.step_max_s;
  f.steps_timed = m.steps_timed;
  f.loss_initial = m.loss_initial;
  f.loss_final = m.loss_final;
  f.loss_held_out = m.loss_held_out;
  f.peak_memory_source = m.peak_memory_source;
  r.measured = std::move(f);
  return r;
}

}  // namespace

ResultSummary parse_measured_run_text(std::string_view text, const std::string& source) {
  scenario::MeasuredRun m;
  try {
    m = scenario::parse_measured_run(text, source);
  } catch (const scenario::ScenarioError& e) {
    throw ReadError(e.what());
  }
  ResultSummary r = measured_summary(m, "measured: " + m.device_name);
  r.num_gpus = m.data_parallel_size;
  const auto tokens = static_cast<double>(m.micro_batch_size * m.grad_accumulation_steps * m.seq_length) *
                      m.data_parallel_size;
  r.tokens_per_s = tokens / m.step_median_s;
  r.peak_bytes_per_gpu = m.peak_memory_bytes.value_or(0.0);
  r.timeline = m.timeline.string();  // resolved against the run file's folder
  return r;
}

namespace {

// A PyTorch profiler trace (docs/pytorch-traces.md): one rank's measured step, by
// kernel class, and its last timed step's kernels as the timeline.
Run load_torch_trace(const std::filesystem::path& path, std::string_view text) {
  std::vector<scenario::TorchTrace> traces;
  scenario::MeasuredRun m;
  try {
    traces.push_back(scenario::parse_torch_trace(text, path.string()));
    m = scenario::measured_run_from_traces(traces, 1, "fused");
  } catch (const scenario::ScenarioError& e) {
    throw ReadError(e.what());
  }
  Run run;
  run.path = path;
  run.label = path.filename().string();
  ResultSummary r = measured_summary(m, "measured (torch.profiler): " + m.device_name);
  r.num_gpus = 1;
  run.result = std::move(r);
  std::ostringstream timeline;
  report::write_trace_timeline(timeline, traces, report::last_common_timed_step(traces), run.label);
  run.timeline = std::make_shared<const TimelineData>(parse_timeline_text(timeline.str(), path.string()));
  return run;
}

}  // namespace

Run load_run(const std::filesystem::path& path) {
  const std::string text = read_text_file(path);
  Run run;
  run.path = path;
  run.label = path.filename().string();
  // A timeline names its format; a result file does not.
  const bool is_timeline = text.find("\"trainsim-timeline\"") != std::string::npos &&
                           text.find("\"iteration_time_s\"") == std::string::npos;
  if (is_timeline) {
    run.timeline = std::make_shared<const TimelineData>(parse_timeline_text(text, path.string()));
    return run;
  }
  if (scenario::looks_like_torch_trace(text)) return load_torch_trace(path, text);
  if (text.find("\"trainsim-measured-run\"") != std::string::npos) {
    run.result = parse_measured_run_text(text, path.string());
    if (run.result->timeline.empty())
      throw ReadError(path.string() + ": /timeline: expected the measured timeline's file name "
                                      "(trainsim-train --timeline true writes it)");
    run.timeline = std::make_shared<const TimelineData>(read_timeline_file(run.result->timeline));
    return run;
  }
  run.result = parse_result_text(text, path.string());
  if (run.result->timeline.empty())
    throw ReadError(path.string() + ": /timeline: expected the timeline file's name");
  run.timeline = std::make_shared<const TimelineData>(read_timeline_file(path.parent_path() / run.result->timeline));
  if (!run.result->run_timeline.empty())
    run.run_timeline =
        std::make_shared<const TimelineData>(read_timeline_file(path.parent_path() / run.result->run_timeline));
  return run;
}

}  // namespace trainsim::gui
