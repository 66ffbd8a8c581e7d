#pragma once
// `trainsim chakra export` and `trainsim chakra run` (docs/chakra.md): a
// scenario's iteration graph written as MLCommons Chakra execution traces, one
// file per simulated rank; and a folder of Chakra traces simulated on a
// scenario's cluster.
#include <CLI/CLI.hpp>
#include <string>

namespace trainsim::cli {

class ChakraCommand {
 public:
  // Adds the "chakra" subcommand, with "export" and "run" under it, to `app`.
  explicit ChakraCommand(CLI::App& app);
  [[nodiscard]] bool parsed() const;
  // Throws what the library throws (scenario, trace and output errors).
  int run() const;

 private:
  int run_export() const;
  int run_trace() const;

  struct Options {
    std::string scenario;
    std::string folder;
    std::string out;
    std::string prefix = "trainsim";
    std::string calibration;
    bool quiet = false;
  };
  CLI::App* command_ = nullptr;
  CLI::App* export_ = nullptr;
  CLI::App* run_ = nullptr;
  Options export_options_;
  Options run_options_;
};

}  // namespace trainsim::cli
