#pragma once
// `trainsim cluster` (docs/cluster.md): a shared cluster, its jobs and a scheduler;
// prints the cluster's figures and each job's, and with --out writes cluster.json,
// jobs.csv and usage.csv.
#include <CLI/CLI.hpp>
#include <string>

namespace trainsim::cli {

class ClusterCommand {
 public:
  // Adds the "cluster" subcommand to `app`.
  explicit ClusterCommand(CLI::App& app);
  [[nodiscard]] bool parsed() const;
  // Throws what the library throws (workload, scenario, simulation and output errors).
  int run() const;

 private:
  struct Options {
    std::string workload;
    std::string policy;
    std::string placement;
    std::string out;
    int jobs = 0;  // 0: every core
    std::size_t show = 40;
    bool compare = false;
    bool quiet = false;
  };
  CLI::App* command_ = nullptr;
  Options options_;
};

}  // namespace trainsim::cli
