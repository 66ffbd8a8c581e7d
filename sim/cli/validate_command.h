#pragma once
// `trainsim validate` (docs/validation.md): simulates the run a measured-run file
// (trainsim-train's RUN.json) describes and prints predicted against measured.
#include <CLI/CLI.hpp>
#include <string>

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

  struct Options {
    std::string measured;
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
