#pragma once
// What the H100 and H200 validation tests share: a measured run held against its
// prediction as `trainsim validate` makes it, a scenario file read with a JSON merge
// patch, and torchtitan's Llama 3 8B step timed at 2 and 8 layers on one lent GPU
// (scripts/pytorch-llama-step.py) against the simulated forward + backward (breakdown
// compute: no optimizer, as measured), as a line through the two layer counts.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "execution/kernel_classes.h"
#include "execution/simulate.h"
#include "report/metrics.h"
#include "report/validation_report.h"
#include "scenario/measured_run.h"
#include "scenario/reader.h"

namespace trainsim::testing {

struct RunErrors {
  double step = 0.0;  // predicted over measured, minus 1
  double peak = 0.0;
};

// The measured-run file `run_path` against the scenario `trainsim validate` makes of
// it with the profile `calibration`; its framework must be `expected`.
inline RunErrors predicted_over_measured(const std::string& run_path, const std::string& calibration,
                                         workload::Framework expected) {
  const scenario::MeasuredRun run = scenario::read_measured_run(run_path);
  scenario::MeasuredScenarioOptions o;
  o.calibration = calibration;
  const config::Scenario s = scenario::scenario_for_measured_run(run, o);
  EXPECT_EQ(s.training.framework, expected) << run_path;
  EXPECT_TRUE(s.calibration.has_value());
  const report::Metrics m = report::compute_metrics(s, exec::simulate(s));
  const report::ValidationReport v = report::validation_report(run, m, exec::kernel_class_seconds(s));
  return {*v.step.error(), *v.peak_memory->error()};
}

// The scenario file at `path` with the RFC 7396 merge patch `patch` applied.
inline config::Scenario patched_scenario(const std::string& path, const nlohmann::json& patch,
                                         const scenario::ReadOptions& options = {}) {
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  nlohmann::json doc = nlohmann::json::parse(text.str());
  doc.merge_patch(patch);
  return scenario::parse_scenario_text(doc.dump(), path, options);
}

struct LlamaLineErrors {
  double per_layer = 0.0;  // simulated over measured, minus 1
  double outside = 0.0;
};

// `measured_file`: a pytorch-llama-step.py result; `scenario_prefix`: the scenarios
// (PREFIX2.json, PREFIX8.json) run with `gpu` as the cluster's GPU preset (empty: their own).
inline LlamaLineErrors llama_line_errors(const std::string& measured_file, bool compiled,
                                         const std::string& scenario_prefix, const std::string& gpu = "") {
  std::ifstream in(measured_file);
  EXPECT_TRUE(in) << measured_file;
  const nlohmann::json measured = nlohmann::json::parse(in);
  // The scenarios describe this run: FlashAttention-2, 2 x 8192 tokens.
  EXPECT_EQ(measured.at("attention").get<std::string>(), "flash");
  EXPECT_EQ(measured.at("config").at("seq").get<int>(), 8192);
  EXPECT_EQ(measured.at("config").at("batch").get<int>(), 2);
  double measured_s[2] = {0, 0};
  const int layers[2] = {2, 8};
  for (const auto& row : measured.at("rows"))
    for (int i = 0; i < 2; ++i)
      if (row.at("compile").get<bool>() == compiled && row.at("layers").get<int>() == layers[i] &&
          row.contains("median_s"))
        measured_s[i] = row.at("median_s").get<double>();
  EXPECT_GT(measured_s[0], 0.0);
  EXPECT_GT(measured_s[1], 0.0);
  const nlohmann::json patch = gpu.empty() ? nlohmann::json::object() : nlohmann::json{{"cluster", {{"gpu", gpu}}}};
  double simulated_s[2];
  for (int i = 0; i < 2; ++i) {
    const config::Scenario s = patched_scenario(scenario_prefix + std::to_string(layers[i]) + ".json", patch);
    EXPECT_EQ(s.training.torch_compile, compiled);
    simulated_s[i] = report::compute_metrics(s, exec::simulate(s)).breakdown_s.compute;
  }
  const auto per_layer = [&](const double* t) { return (t[1] - t[0]) / (layers[1] - layers[0]); };
  const auto outside = [&](const double* t) { return t[0] - layers[0] * per_layer(t); };
  return {per_layer(simulated_s) / per_layer(measured_s) - 1.0, outside(simulated_s) / outside(measured_s) - 1.0};
}

}  // namespace trainsim::testing
