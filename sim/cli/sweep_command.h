#pragma once
// `trainsim sweep` and `trainsim plan` (docs/sweep.md): the command-line driver
// of the sweep module, threads in one process or an MPI task farm.
#include <CLI/CLI.hpp>
#include <string>

namespace trainsim::cli {

// Exit status of a run that stopped early by --stop-after (partial outputs, a
// journal to resume from); one stopped by a signal exits with 128 + its number.
inline constexpr int kExitPartial = 3;

class SweepCommands {
 public:
  // Adds the "sweep" and "plan" subcommands to `app`.
  explicit SweepCommands(CLI::App& app);
  [[nodiscard]] bool parsed() const;
  // Runs the parsed one; throws what the library throws (spec errors, output errors).
  // argc/argv go to MPI_Init when an MPI launcher started the process.
  int run(int* argc, char*** argv);

 private:
  struct Options {
    std::string spec;
    std::string out;
    std::string rank_by;
    int top = 0;
    int jobs = 0;  // 0: every core (1 per rank under MPI)
    int show = 10;
    bool quiet = false;
    bool resume = false;
    long long stop_after = 0;  // 0: run to the end
  };
  CLI::App* sweep_ = nullptr;
  CLI::App* plan_ = nullptr;
  Options sweep_options_;
  Options plan_options_;
};

}  // namespace trainsim::cli
