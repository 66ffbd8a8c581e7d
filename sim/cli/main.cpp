// trainsim: the command-line front end. All work happens in the library; this
// file parses arguments, prints, and maps errors to exit codes.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <fmt/format.h>
#include <iostream>

#include "execution/simulate.h"
#include "report/atomic_file.h"
#include "report/json_text.h"
#include "report/metrics.h"
#include "report/rank_list.h"
#include "report/result_json.h"
#include "report/summary.h"
#include "report/timeline_writer.h"
#include "scenario/errors.h"
#include "scenario/presets.h"
#include "scenario/reader.h"

namespace {

namespace fs = std::filesystem;
using namespace trainsim;

constexpr int kExitError = 1;  // a scenario, simulation or output error
constexpr int kExitUsage = 2;  // bad command-line arguments

struct RunOptions {
  std::string scenario;
  std::string out;
  std::string trace;
  std::string trace_ranks;
  bool quiet = false;
};

// "result.json" -> "result.timeline.json", beside it.
fs::path timeline_path_for(const fs::path& result) {
  fs::path p = result;
  p.replace_extension();
  return p.string() + ".timeline.json";
}

int run(const RunOptions& o) {
  const scenario::Scenario s = scenario::read_scenario_file(o.scenario);
  std::vector<long long> ranks;
  if (!o.trace.empty()) {
    ranks = o.trace_ranks.empty() ? report::default_trace_ranks(s.cluster.num_gpus(), s.cluster.gpus_per_node)
                                  : report::parse_rank_list(o.trace_ranks, s.cluster.num_gpus());
  }
  const exec::SimulationOutput out = exec::simulate(s);
  const report::Metrics m = report::compute_metrics(s, out);
  if (!o.quiet) std::cout << report::summary_text(s, m) << std::flush;

  if (!o.out.empty()) {
    const fs::path timeline = timeline_path_for(o.out);
    report::write_timeline(timeline, s, out);
    report::write_result(o.out, report::result_json(s, m, timeline.filename().string()));
    if (!o.quiet) std::cout << fmt::format("\nwrote {} and {}\n", o.out, timeline.string());
  }
  if (!o.trace.empty()) {
    report::write_trace(o.trace, s, out, ranks);
    if (!o.quiet)
      std::cout << fmt::format("wrote {} (ranks {}; open it in ui.perfetto.dev)\n", o.trace,
                               report::rank_ranges(ranks));
  }
  return 0;
}

void list_presets() {
  std::cout << "GPU presets (cluster.gpu):\n";
  for (const auto& n : scenario::preset_names(scenario::PresetKind::kHardware)) std::cout << "  " << n << '\n';
  std::cout << "model presets (model):\n";
  for (const auto& n : scenario::preset_names(scenario::PresetKind::kModel)) std::cout << "  " << n << '\n';
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"trainsim: predicts distributed deep-learning training on GPU clusters"};
  app.set_version_flag("--version", "trainsim 0.1.0");
  app.require_subcommand(1);

  RunOptions run_opts;
  CLI::App* run_cmd = app.add_subcommand("run", "Simulate a scenario and print its summary");
  run_cmd->add_option("scenario", run_opts.scenario, "Scenario JSON file")->required();
  run_cmd->add_option("--out", run_opts.out, "Write the result JSON here (and RESULT.timeline.json beside it)");
  CLI::Option* trace = run_cmd->add_option("--trace", run_opts.trace, "Write a Chrome/Perfetto trace here");
  run_cmd
      ->add_option("--trace-ranks", run_opts.trace_ranks,
                   "Ranks in the trace, e.g. 0-7,16 (default: all up to 64 GPUs, else the first node)")
      ->needs(trace);
  run_cmd->add_flag("--quiet,-q", run_opts.quiet, "Print nothing but errors");
  CLI::App* presets_cmd = app.add_subcommand("presets", "List the built-in GPU and model presets");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version end here too, with code 0.
    return app.exit(e) == 0 ? 0 : kExitUsage;
  }
  try {
    if (presets_cmd->parsed()) {
      list_presets();
      return 0;
    }
    return run(run_opts);
  } catch (const scenario::ScenarioError& e) {
    std::cerr << "error: " << e.what() << '\n';
  } catch (const report::OutputError& e) {
    std::cerr << "error: " << e.what() << '\n';
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << '\n';
  }
  return kExitError;
}
