#include "cli/chakra_command.h"
#include "cli/output_paths.h"

#include <fmt/format.h>
#include <iostream>

#include "execution/simulate.h"
#include "report/chakra_writer.h"
#include "report/metrics.h"
#include "report/result_json.h"
#include "report/summary.h"
#include "report/timeline_writer.h"
#include "scenario/chakra_reader.h"
#include "scenario/errors.h"
#include "scenario/reader.h"

namespace trainsim::cli {

namespace {

config::Scenario read(const std::string& path, const std::string& calibration) {
  scenario::ReadOptions options;
  if (!calibration.empty()) options.calibration = calibration;
  config::Scenario s = scenario::read_scenario_file(path, options);
  if (s.parallel.mode != workload::TrainingMode::kSync)
    throw scenario::ScenarioError(path, "/parallelism/mode",
                                  "Chakra traces hold synchronous training only; expected \"sync\"");
  return s;
}

}  // namespace

ChakraCommand::ChakraCommand(CLI::App& app) {
  command_ = app.add_subcommand("chakra", "MLCommons Chakra execution traces: export a scenario's, simulate a folder's");
  command_->require_subcommand(1);
  export_ = command_->add_subcommand("export", "Write a scenario's iteration graph as Chakra ET files, one per simulated rank");
  export_->add_option("scenario", export_options_.scenario, "Scenario JSON file")->required();
  export_->add_option("--out", export_options_.out, "Folder for PREFIX.RANK.et (created)")->required();
  export_->add_option("--prefix", export_options_.prefix, "The files' prefix")->capture_default_str();
  export_->add_flag("--quiet,-q", export_options_.quiet, "Print nothing but errors");
  run_ = command_->add_subcommand("run", "Simulate a folder of Chakra ET files (PREFIX.RANK.et) on a scenario's cluster");
  run_->add_option("folder", run_options_.folder, "Folder of Chakra ET files")->required();
  run_->add_option("--scenario", run_options_.scenario,
                   "Scenario JSON file: its cluster, network and precision run the trace")
      ->required();
  run_->add_option("--out", run_options_.out, "Write the result JSON here (and RESULT.timeline.json beside it)");
  run_->add_option("--calibration", run_options_.calibration, "Calibration profile instead of the scenario's");
  run_->add_flag("--quiet,-q", run_options_.quiet, "Print nothing but errors");
}

bool ChakraCommand::parsed() const { return command_->parsed(); }

int ChakraCommand::run() const { return export_->parsed() ? run_export() : run_trace(); }

int ChakraCommand::run_export() const {
  const Options& o = export_options_;
  const config::Scenario s = read(o.scenario, o.calibration);
  const workload::IterationGraph it =
      workload::build_iteration_graph(s.model, s.training, s.parallel, s.cluster, s.simulation.iterations);
  const std::vector<std::filesystem::path> files = report::write_chakra_traces(o.out, o.prefix, it);
  if (!o.quiet)
    std::cout << fmt::format("wrote {} Chakra ET files ({}.RANK.et, ranks {}) to {}: {} tasks, {} iteration(s)\n",
                             files.size(), o.prefix, fmt::join(it.simulated_ranks, ","), o.out, it.graph.size(),
                             it.iterations);
  return 0;
}

int ChakraCommand::run_trace() const {
  const Options& o = run_options_;
  const config::Scenario s = read(o.scenario, o.calibration);
  scenario::ChakraTrace trace = scenario::read_chakra_folder(o.folder, s.cluster);
  const std::size_t tasks = trace.iteration.graph.size();
  const exec::SimulationOutput out = exec::simulate_graph(s, std::move(trace.iteration));
  report::Metrics m = report::compute_metrics(s, out);
  // The corpus's record of trainsim's error (docs/model.md, "Prediction interval") is
  // of the jobs trainsim builds, not of another tool's graph.
  if (!trace.written_by_trainsim) m.prediction_interval.reset();
  if (!o.quiet) {
    std::cout << fmt::format("{:<18}{} files, {} nodes, {} tasks ({})\n", "chakra trace", trace.files.size(),
                             trace.nodes, tasks,
                             trace.written_by_trainsim
                                 ? "written by trainsim: the same graph"
                                 : fmt::format("{} priced by the roofline, {} by their duration, {} CPU operators and "
                                               "{} metadata nodes passed over",
                                               trace.priced, trace.measured, trace.cpu_ops_skipped,
                                               trace.metadata_skipped));
    std::cout << report::summary_text(s, m) << std::flush;
  }
  if (!o.out.empty()) {
    const std::filesystem::path timeline = timeline_path_for(o.out, "timeline", false);
    report::write_timeline(timeline, s, out);
    report::write_result(o.out, report::result_json(s, m, timeline.filename().string(), ""));
    if (!o.quiet) std::cout << fmt::format("\nwrote {} and {}\n", o.out, timeline.string());
  }
  return 0;
}

}  // namespace trainsim::cli
