// trainsim: the command-line front end. All work happens in the library; this
// file parses arguments, prints, and maps errors to exit codes.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fmt/format.h>
#include <iostream>
#include <string_view>

#include "cli/chakra_command.h"
#include "cli/cluster_command.h"
#include "cli/interrupt.h"
#include "cli/output_paths.h"
#include "cli/progress_bar.h"
#include "cli/sweep_command.h"
#include "cli/validate_command.h"
#include "core/parallel.h"
#include "core/version.h"
#include "execution/full_run.h"
#include "execution/simulate.h"
#include "io/atomic_file.h"
#include "scenario/cluster_file.h"
#include "report/collective_table.h"
#include "scenario/collective_options.h"
#include "report/json_text.h"
#include "report/metrics.h"
#include "report/microbatch_extrapolation.h"
#include "report/rank_list.h"
#include "report/result_json.h"
#include "report/run_timeline.h"
#include "report/summary.h"
#include "report/timeline_writer.h"
#include "scenario/errors.h"
#include "scenario/presets.h"
#include "scenario/reader.h"

namespace {

namespace fs = std::filesystem;
using namespace trainsim;
using cli::timeline_path_for;

constexpr int kExitError = 1;  // a scenario, simulation or output error
constexpr int kExitUsage = 2;  // bad command-line arguments
constexpr double kProgressDelayS = 1.0;  // a phase shorter than this shows no progress bar

struct RunOptions {
  std::string scenario;
  std::string out;
  std::string trace;
  std::string trace_ranks;
  std::string calibration;
  bool gzip_timeline = false;
  bool quiet = false;
  bool exact = false;
};

// `work` given simulation options whose progress draws a bar labelled `label`
// (once it has taken a second), and what it returns.
template <class Work>
auto with_progress(bool quiet, std::string_view label, Work work) {
  cli::ProgressBar bar(!quiet, kProgressDelayS);
  exec::SimulateOptions options;
  options.progress = [&](double f) { bar.update(f, fmt::format("{} {:3.0f}%", label, 100.0 * f)); };
  auto result = work(options);
  bar.finish();
  return result;
}

// The failure replay of `run` (docs/reliability.md), with its progress bar and
// its ETA once a second has passed (for logs too, where the bar is not drawn).
struct Replay {
  std::optional<exec::FullRunReport> report;  // none: stopped before the first trial ended
  double seconds = 0.0;
  int stopped_by = 0;  // the signal that ended the Monte Carlo early
};

Replay replay_failures(const config::Scenario& s, const exec::SimulationOutput& out, bool quiet) {
  cli::ProgressBar replaying(!quiet, kProgressDelayS);
  const int trials = s.failures->trials;
  const int threads = std::clamp(core::threads_or_every_core(s.failures->threads), 1, trials);
  bool estimated = quiet;
  const auto progress = [&](double f) {
    const double elapsed = replaying.elapsed_s();
    if (!estimated && elapsed >= kProgressDelayS && f < 1.0) {
      estimated = true;
      const double left = elapsed * (1.0 - f) / f;
      std::cerr << fmt::format("monte carlo: {} trials on {} threads, {:.0f}% in {:.1f} s, about {} left; Ctrl-C "
                               "stops early with the trials done\n",
                               trials, threads, 100.0 * f, elapsed,
                               left < 120 ? fmt::format("{:.0f} s", left) : fmt::format("{:.1f} min", left / 60.0));
    }
    replaying.update(f, fmt::format("monte carlo {:3.0f}%", 100.0 * f));
  };
  // Ctrl-C or SIGTERM here: the trials that ran make a partial result (docs/reliability.md).
  const cli::InterruptGuard guard;
  exec::FullRunReport full_run =
      exec::simulate_full_run(s, out, progress, [] { return cli::InterruptGuard::signal() != 0; });
  replaying.finish();
  Replay r;
  r.seconds = replaying.elapsed_s();
  if (full_run.monte_carlo.trials < full_run.monte_carlo.trials_requested) {
    r.stopped_by = cli::InterruptGuard::signal();
    full_run.stopped_by = cli::InterruptGuard::name(r.stopped_by);
    if (full_run.monte_carlo.trials == 0) {
      std::cerr << fmt::format("stopped by {} before the first Monte Carlo trial ended: nothing written\n",
                               full_run.stopped_by);
      return r;
    }
  }
  r.report = std::move(full_run);
  return r;
}

int run(const RunOptions& o) {
  scenario::ReadOptions read;
  if (!o.calibration.empty()) read.calibration = o.calibration;
  const config::Scenario s = scenario::read_scenario_file(o.scenario, read);
  if (s.calibration && !o.quiet)
    for (const std::string& w : s.calibration->warnings) std::cerr << "warning: " << w << '\n';
  std::vector<long long> ranks;
  if (!o.trace.empty()) {
    ranks = o.trace_ranks.empty() ? report::default_trace_ranks(s.cluster.num_gpus(), s.cluster.gpus_per_node)
                                  : report::parse_rank_list(o.trace_ranks, s.cluster.num_gpus());
  }
  // A run that takes more than a second shows how far it is (the Megatron-LM 1T
  // layout simulates for about a second on one core).
  // Without files that need every span (the timeline, the trace) or the
  // failure replay (which reuses the simulated graph), a scenario with many
  // micro-batches is timed from short runs: the same result, byte for byte
  // (report/microbatch_extrapolation.h; --exact simulates every micro-batch).
  // Each phase has its own bar, so that a full simulation after short runs
  // that were not on a line starts its own ETA.
  std::optional<report::Metrics> extrapolated;
  if (!o.exact && o.out.empty() && o.trace.empty() && !s.failures)
    extrapolated = with_progress(o.quiet, "short runs", [&](const exec::SimulateOptions& options) {
      return report::extrapolated_metrics(s, options);
    });
  exec::SimulationOutput out;
  if (!extrapolated)
    out = with_progress(o.quiet, "simulating",
                        [&](const exec::SimulateOptions& options) { return exec::simulate(s, options); });
  report::Metrics m = extrapolated ? std::move(*extrapolated) : report::compute_metrics(s, out);
  Replay replay;
  if (s.failures) {
    replay = replay_failures(s, out, o.quiet);
    if (!replay.report) return cli::InterruptGuard::exit_status(replay.stopped_by);  // stopped before a trial ended
    report::add_reliability(m, std::move(*replay.report));
  }
  const double replay_s = replay.seconds;
  const int stopped_by = replay.stopped_by;
  if (!o.quiet) {
    std::cout << report::summary_text(s, m);
    if (m.reliability)
      std::cout << fmt::format("{:<18}{} trials on {} threads in {:.2f} s, {} extra iteration simulations\n",
                               "monte carlo", m.reliability->monte_carlo.trials, m.reliability->monte_carlo.threads,
                               replay_s, m.reliability->states_simulated);
    std::cout << std::flush;
  }

  if (!o.out.empty()) {
    const fs::path timeline = timeline_path_for(o.out, "timeline", o.gzip_timeline);
    report::write_timeline(timeline, s, out);
    fs::path run_timeline;
    if (m.reliability) {
      run_timeline = timeline_path_for(o.out, "run_timeline", o.gzip_timeline);
      report::write_run_timeline(run_timeline, s, *m.reliability);
    }
    report::write_result(o.out, report::result_json(s, m, timeline.filename().string(),
                                                    run_timeline.empty() ? "" : run_timeline.filename().string()));
    if (!o.quiet)
      std::cout << fmt::format("\nwrote {} and {}{}\n", o.out, timeline.string(),
                               run_timeline.empty() ? "" : " and " + run_timeline.string());
  }
  if (!o.trace.empty()) {
    report::write_trace(o.trace, s, out, ranks, m.reliability ? &*m.reliability : nullptr);
    if (!o.quiet)
      std::cout << fmt::format("wrote {} (ranks {}; open it in ui.perfetto.dev)\n", o.trace,
                               report::rank_ranges(ranks));
  }
  if (stopped_by != 0) {
    std::cerr << fmt::format("stopped by {}: the figures under failures are those of the {} trials that ran\n",
                             cli::InterruptGuard::name(stopped_by), m.reliability->monte_carlo.trials);
    return cli::InterruptGuard::exit_status(stopped_by);
  }
  return 0;
}

struct CollectiveOptions {
  std::string cluster;
  std::string op = "all_reduce";
  std::string min_bytes = "8";
  std::string max_bytes = "8G";
  std::uint64_t factor = 2;
  int gpus = 0;  // 0: every GPU of the cluster
  std::string algorithm = "auto";
  std::string model = "flow";
};

// Validators run while CLI11 parses, so a bad value is a usage error (exit 2).
std::string check_operation(const std::string& name) {
  if (scenario::collective_kind_from_string(name)) return "";
  return fmt::format("unknown operation \"{}\"; use all_reduce, all_gather, reduce_scatter, all_to_all, broadcast, "
                     "reduce or send_recv (or nccl-tests' allreduce, allgather, ...)",
                     name);
}

std::string check_byte_size(const std::string& text) {
  if (scenario::parse_byte_size(text)) return "";
  return fmt::format("\"{}\" is not a size in bytes; e.g. 8, 64K, 128M, 8G (powers of 1024)", text);
}

int collective(const CollectiveOptions& o) {
  const hw::ClusterSpec cluster = scenario::read_cluster_file(o.cluster);
  report::CollectiveTableOptions t;
  t.kind = *scenario::collective_kind_from_string(o.op);
  t.min_bytes = *scenario::parse_byte_size(o.min_bytes);
  t.max_bytes = *scenario::parse_byte_size(o.max_bytes);
  t.factor = o.factor;
  t.gpus = o.gpus;
  t.algorithm = *net::algorithm_from_string(o.algorithm);
  t.model = o.model == "analytic" ? report::CollectiveNetworkModel::kAnalytic : report::CollectiveNetworkModel::kFlow;
  std::cout << report::format_collective_table(cluster, t, report::collective_table(cluster, t)) << std::flush;
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
  app.set_version_flag("--version", std::string("trainsim ") + core::kVersion);
  app.require_subcommand(1);

  RunOptions run_opts;
  CLI::App* run_cmd = app.add_subcommand("run", "Simulate a scenario and print its summary");
  run_cmd->add_option("scenario", run_opts.scenario, "Scenario JSON file")->required();
  run_cmd->add_option("--out", run_opts.out, "Write the result JSON here (and RESULT.timeline.json beside it)");
  run_cmd
      ->add_flag("--gzip-timeline", run_opts.gzip_timeline,
                 "Write the timeline (and the run timeline) gzip-compressed: RESULT.timeline.json.gz")
      ->needs(run_cmd->get_option("--out"));
  CLI::Option* trace = run_cmd->add_option("--trace", run_opts.trace, "Write a Chrome/Perfetto trace here");
  run_cmd
      ->add_option("--trace-ranks", run_opts.trace_ranks,
                   "Ranks in the trace, e.g. 0-7,16 (default: all up to 64 GPUs, else the first node)")
      ->needs(trace);
  run_cmd->add_option("--calibration", run_opts.calibration,
                      "Take kernel costs from this calibration profile (overrides the scenario's \"calibration\")");
  run_cmd->add_flag("--quiet,-q", run_opts.quiet, "Print nothing but errors");
  run_cmd->add_flag("--exact", run_opts.exact,
                    "Simulate every micro-batch, also where the steady state is extrapolated from short runs "
                    "(the same result; see docs/user-guide.md)");
  CLI::App* presets_cmd = app.add_subcommand("presets", "List the built-in GPU and model presets");

  // Flags after nccl-tests' (-b -e -f -g), so its users know them.
  CollectiveOptions coll_opts;
  CLI::App* coll_cmd =
      app.add_subcommand("collective", "Print an nccl-tests-style table of one collective on a simulated cluster");
  coll_cmd->add_option("--cluster", coll_opts.cluster, "Scenario JSON file, or a JSON file holding just a cluster")
      ->required();
  coll_cmd
      ->add_option("--op", coll_opts.op, "all_reduce, all_gather, reduce_scatter, all_to_all, broadcast, reduce, "
                                         "send_recv")
      ->check(CLI::Validator([](std::string& s) { return check_operation(s); }, "OP"))
      ->capture_default_str();
  const CLI::Validator byte_size([](std::string& s) { return check_byte_size(s); }, "BYTES");
  coll_cmd->add_option("-b,--minbytes", coll_opts.min_bytes, "Smallest size in bytes (K, M, G: powers of 1024)")
      ->check(byte_size)
      ->capture_default_str();
  coll_cmd->add_option("-e,--maxbytes", coll_opts.max_bytes, "Largest size in bytes")
      ->check(byte_size)
      ->capture_default_str();
  coll_cmd->add_option("-f,--stepfactor", coll_opts.factor, "Each size is the last times this")
      ->check(CLI::Range(std::uint64_t{2}, std::uint64_t{1} << 20))
      ->capture_default_str();
  coll_cmd
      ->add_option("-g,--ngpus", coll_opts.gpus,
                   "GPUs in the group: the first ranks, node by node (default: all; beyond a node: whole nodes)")
      ->check(CLI::Range(1, 1'000'000));
  coll_cmd
      ->add_option("--algo", coll_opts.algorithm,
                   "Collective algorithm (auto: the fastest for each size, as NCCL picks)")
      ->check(CLI::IsMember({"auto", "ring", "tree", "halving_doubling", "hierarchical", "nvls", "direct", "pairwise"}))
      ->capture_default_str();
  coll_cmd->add_option("--model", coll_opts.model, "Network model")
      ->check(CLI::IsMember({"analytic", "flow"}))
      ->capture_default_str();
  coll_cmd->callback([&coll_opts] {
    if (*scenario::parse_byte_size(coll_opts.min_bytes) > *scenario::parse_byte_size(coll_opts.max_bytes))
      throw CLI::ValidationError("--maxbytes", fmt::format("{} is below --minbytes {}", coll_opts.max_bytes,
                                                          coll_opts.min_bytes));
  });

  cli::SweepCommands sweep_cmds(app);
  const cli::ValidateCommand validate_cmd(app);
  const cli::ClusterCommand cluster_cmd(app);
  const cli::ChakraCommand chakra_cmd(app);

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
    if (coll_cmd->parsed()) return collective(coll_opts);
    if (sweep_cmds.parsed()) return sweep_cmds.run(&argc, &argv);
    if (validate_cmd.parsed()) return validate_cmd.run();
    if (cluster_cmd.parsed()) return cluster_cmd.run();
    if (chakra_cmd.parsed()) return chakra_cmd.run();
    return run(run_opts);
  } catch (const scenario::ScenarioError& e) {
    std::cerr << "error: " << e.what() << '\n';
  } catch (const io::OutputError& e) {
    std::cerr << "error: " << e.what() << '\n';
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << '\n';
  }
  return kExitError;
}
