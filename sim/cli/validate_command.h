#pragma once
// `trainsim validate` (docs/validation.md): simulates the run a measured-run file
// (trainsim-train's RUN.json) describes, or the scenario of a job whose PyTorch
// profiler traces are given (docs/pytorch-traces.md), and prints predicted against
// measured.
#include <CLI/CLI.hpp>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "config/scenario.h"
#include "execution/simulate.h"
#include "report/metrics.h"
#include "report/validation_report.h"

namespace trainsim::cli {

class ValidateCommand {
 public:
  // Adds the "validate" subcommand to `app`.
  explicit ValidateCommand(CLI::App& app);
  [[nodiscard]] bool parsed() const;
  // Throws what the library throws (run-file, scenario and output errors).
  int run() const;

 private:
  // --corpus: every case, the report by group.
  int run_corpus() const;
  // --measured TRACE.json... --scenario S.json: profiler traces against the scenario.
  int run_traces() const;
  static std::string compute_model(const config::Scenario& s);
  // predicted.json, predicted.timeline.json and validation.json in `dir`, and the
  // measured timeline `measured_timeline` writes there (returning its name, or "").
  void write_outputs(const std::filesystem::path& dir, const config::Scenario& s, const exec::SimulationOutput& out,
                     const report::Metrics& m, const report::ValidationReport& r,
                     const std::function<std::string(const std::filesystem::path&)>& measured_timeline) const;

  struct Options {
    std::vector<std::string> measured;  // a run file, or one profiler trace per rank
    std::string scenario;
    std::string corpus;
    std::string only;
    std::string record;
    std::string record_model_error;
    int jobs = 0;  // 0: every core
    std::string calibration;
    std::string gpu;
    std::string out;
    bool quiet = false;
  };
  CLI::App* command_ = nullptr;
  Options options_;
};

}  // namespace trainsim::cli
