#pragma once
// torchtitan's Llama 3 8B model code at 2 and 8 layers, 2 x 8192 tokens, op SAC,
// FlashAttention-2, timed on one lent GPU (scripts/pytorch-llama-step.py), against the
// simulated forward + backward (breakdown compute: no optimizer, as measured), as a line
// through the two layer counts: the error per layer and outside the layers. Shared by
// the H100 and H200 validation tests.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "execution/simulate.h"
#include "report/metrics.h"
#include "scenario/reader.h"

namespace trainsim::testing {

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
  double simulated_s[2];
  for (int i = 0; i < 2; ++i) {
    const std::string path = scenario_prefix + std::to_string(layers[i]) + ".json";
    std::ifstream file(path);
    std::stringstream text;
    text << file.rdbuf();
    nlohmann::json doc = nlohmann::json::parse(text.str());
    if (!gpu.empty()) doc["cluster"]["gpu"] = gpu;
    const config::Scenario s = scenario::parse_scenario_text(doc.dump(), path);
    EXPECT_EQ(s.training.torch_compile, compiled);
    simulated_s[i] = report::compute_metrics(s, exec::simulate(s)).breakdown_s.compute;
  }
  const auto per_layer = [&](const double* t) { return (t[1] - t[0]) / (layers[1] - layers[0]); };
  const auto outside = [&](const double* t) { return t[0] - layers[0] * per_layer(t); };
  return {per_layer(simulated_s) / per_layer(measured_s) - 1.0, outside(simulated_s) / outside(measured_s) - 1.0};
}

}  // namespace trainsim::testing
