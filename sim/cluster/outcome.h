#pragma once
// What a shared cluster did (docs/cluster.md, "Results"): per job its queueing
// delay, completion time, slowdown against running alone, goodput, GPU-hours, cost
// and energy; per cluster its utilization over time, the GPUs left idle while jobs
// waited, energy and cost; and their JSON, CSV and summary table.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cluster/job_timing.h"
#include "cluster/schedule.h"

namespace trainsim::cluster {

struct JobFigures {
  double start_s = 0.0;       // first start
  double queue_s = 0.0;       // first start - arrival
  double completion_s = 0.0;  // end - arrival
  double held_s = 0.0;        // GPUs held, over all its segments
  double train_s = 0.0;       // of which its iterations ran
  double alone_s = 0.0;       // iterations x its iteration time alone on the empty cluster
  double slowdown = 0.0;      // completion_s / alone_s
  double iteration_slowdown = 0.0;  // train_s / alone_s: its placements against the alone one
  int preemptions = 0;
  int resizes = 0;  // an elastic job's size changes
  int failures = 0;  // interruptions by a failed node
  double gpu_hours = 0.0;  // sum over its segments of GPUs x time held
  double goodput = 0.0;  // train_s less periodic checkpoints / held_s
  std::optional<double> cost_usd;
  double energy_kwh = 0.0;
};

struct ClusterFigures {
  std::vector<JobFigures> jobs;
  double makespan_s = 0.0;
  double utilization = 0.0;         // busy GPU-seconds / (GPUs x makespan)
  double idle_while_waiting = 0.0;  // free GPU-seconds while a job waited / (GPUs x makespan)
  double mean_queue_s = 0.0;
  double mean_completion_s = 0.0;
  double mean_slowdown = 0.0;
  double gpu_hours = 0.0;
  std::optional<double> cost_usd;
  double energy_kwh = 0.0;  // the jobs', the idle GPUs' and the nodes' overheads, times the PUE
  int preemptions = 0;
  int node_failures = 0;
  double node_down_hours = 0.0;  // within the makespan
};

ClusterFigures cluster_figures(const config::ClusterWorkload& w, const JobTiming& timing, const ScheduleResult& r);

nlohmann::ordered_json cluster_json(const config::ClusterWorkload& w, const JobTiming& timing,
                                    const ScheduleResult& r, const ClusterFigures& f);
std::string jobs_csv(const config::ClusterWorkload& w, const JobTiming& timing, const ScheduleResult& r,
                     const ClusterFigures& f);
std::string usage_csv(const ScheduleResult& r);
// The cluster's figures and the first `show` jobs, as text.
std::string cluster_table(const config::ClusterWorkload& w, const JobTiming& timing, const ScheduleResult& r,
                          const ClusterFigures& f, std::size_t show);
// One line per policy run on the same workload (trainsim cluster --compare).
std::string comparison_table(const std::vector<std::pair<std::string, ClusterFigures>>& runs);

std::string_view to_string(config::SchedulerPolicy p);
std::string_view to_string(config::PlacementPolicy p);

}  // namespace trainsim::cluster
