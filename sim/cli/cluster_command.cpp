#include "cli/cluster_command.h"

#include <filesystem>
#include <fmt/format.h>
#include <iostream>

#include "cluster/best_layout.h"
#include "cluster/cluster_timeline.h"
#include "cluster/job_timing.h"
#include "cluster/outcome.h"
#include "cluster/schedule.h"
#include "io/atomic_file.h"
#include "scenario/cluster_workload_reader.h"

namespace trainsim::cli {

namespace {

namespace fs = std::filesystem;

config::SchedulerPolicy policy_named(const std::string& name) {
  if (name == "backfill") return config::SchedulerPolicy::kBackfill;
  if (name == "priority") return config::SchedulerPolicy::kPriority;
  return config::SchedulerPolicy::kFifo;
}

void write_outputs(const fs::path& dir, const config::ClusterWorkload& w, const cluster::JobTiming& timing,
                   const cluster::ScheduleResult& r, const cluster::ClusterFigures& f) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw io::OutputError(dir.string() + ": cannot create the output folder: " + ec.message());
  const nlohmann::ordered_json j = cluster::cluster_json(w, timing, r, f);
  io::write_atomically(dir / "cluster.json", [&j](std::ostream& os) { os << j.dump(1) << '\n'; });
  io::write_atomically(dir / "jobs.csv", [&](std::ostream& os) { os << cluster::jobs_csv(w, timing, r, f); });
  io::write_atomically(dir / "usage.csv", [&](std::ostream& os) { os << cluster::usage_csv(r); });
  io::write_atomically(dir / "cluster.timeline.json",
                       [&](std::ostream& os) { cluster::write_cluster_timeline(os, w, r); });
}

}  // namespace

ClusterCommand::ClusterCommand(CLI::App& app) {
  command_ = app.add_subcommand("cluster", "Simulate a shared cluster: jobs arriving, a scheduler placing them, each "
                                           "job timed by its own simulation");
  command_->add_option("workload", options_.workload, "Cluster workload JSON file (docs/cluster.md)")->required();
  command_->add_option("--policy", options_.policy, "Scheduler policy instead of the file's")
      ->check(CLI::IsMember({"fifo", "backfill", "priority"}));
  command_->add_option("--placement", options_.placement, "Placement instead of the file's")
      ->check(CLI::IsMember({"topology_aware", "blind"}));
  command_->add_flag("--compare", options_.compare,
                     "Run the workload under fifo, backfill and priority (the file's placement) and compare them");
  command_->add_option("--out", options_.out,
                       "Folder for cluster.json, jobs.csv, usage.csv and cluster.timeline.json (jobs over GPUs, "
                       "for trainsim-gui)");
  command_->add_option("-j,--jobs", options_.jobs, "Threads for the job simulations (default: every core)")
      ->check(CLI::Range(1, 1024));
  command_->add_option("--show", options_.show, "Jobs listed in the summary")->capture_default_str();
  command_->add_flag("--quiet,-q", options_.quiet, "Print nothing but errors");
}

bool ClusterCommand::parsed() const { return command_->parsed(); }

int ClusterCommand::run() const {
  config::ClusterWorkload w = scenario::read_cluster_workload_file(options_.workload);
  if (!options_.policy.empty()) w.scheduler.policy = policy_named(options_.policy);
  if (!options_.placement.empty())
    w.scheduler.placement = options_.placement == "blind" ? config::PlacementPolicy::kBlind
                                                          : config::PlacementPolicy::kTopologyAware;
  cluster::resolve_best_layouts(w, options_.jobs);
  cluster::JobTiming timing(w, options_.jobs);
  cluster::resolve_trace_lengths(w, timing);
  if (!options_.quiet)
    for (const std::string& note : w.notes) std::cout << "note: " << note << '\n';
  if (options_.compare) {
    std::vector<std::pair<std::string, cluster::ClusterFigures>> runs;
    for (config::SchedulerPolicy p :
         {config::SchedulerPolicy::kFifo, config::SchedulerPolicy::kBackfill, config::SchedulerPolicy::kPriority}) {
      w.scheduler.policy = p;
      const cluster::ScheduleResult r = cluster::run_schedule(w, timing.timer());
      runs.emplace_back(fmt::format("{}, {}", cluster::to_string(p), cluster::to_string(w.scheduler.placement)),
                        cluster::cluster_figures(w, timing, r));
      if (!options_.out.empty()) write_outputs(fs::path(options_.out) / cluster::to_string(p), w, timing, r, runs.back().second);
    }
    if (!options_.quiet) std::cout << w.name << ": " << w.jobs.size() << " jobs on " << w.cluster.num_gpus()
                                   << " GPUs\n" << cluster::comparison_table(runs);
    return 0;
  }
  const cluster::ScheduleResult r = cluster::run_schedule(w, timing.timer());
  const cluster::ClusterFigures f = cluster::cluster_figures(w, timing, r);
  if (!options_.out.empty()) write_outputs(options_.out, w, timing, r, f);
  if (!options_.quiet) std::cout << cluster::cluster_table(w, timing, r, f, options_.show);
  return 0;
}

}  // namespace trainsim::cli
