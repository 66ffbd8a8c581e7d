#pragma once
// The shared cluster over time (docs/cluster.md): jobs arrive, wait in the queue,
// are placed, run their iterations and leave, as events on core::Simulator. The
// policy (config::SchedulerPolicy) orders the queue and says who may jump it; a
// job's iteration time on its placement comes from `JobTimer` (the job simulation
// itself: cluster/job_timing.h), so the schedule here is only the bookkeeping.
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "cluster/contention.h"
#include "cluster/placement.h"
#include "config/cluster_workload.h"

namespace trainsim::cluster {

// A job's pace on a placement: seconds per iteration and the GPUs' busy share.
struct JobPace {
  double iteration_s = 0.0;
  double gpu_utilization = 0.0;
};

// What a preemption costs a job (docs/cluster.md, "Preemption"): the checkpoint it
// writes before it gives its GPUs back, and what a restart from it costs before the
// first iteration (restart overhead + reading the checkpoint back).
struct PreemptionCost {
  double checkpoint_s = 0.0;
  double restart_s = 0.0;
  double detection_s = 0.0;  // after a failure, before the restart (failures.detection_time)
  // The interval it checkpoints at when nodes fail (failures.checkpoint_interval, or
  // Daly's for its mean time to interrupt): given the job's nodes.
  std::function<double(int nodes)> checkpoint_interval;
};

// The job simulation's answers, by job index and placement.
struct JobTimer {
  std::function<JobPace(std::size_t job, const Placement& placement)> pace;
  std::function<PreemptionCost(std::size_t job)> preemption;
  // Contention between jobs (cluster/contention.h); both empty: none. The job's duty
  // on each cluster group's uplinks alone, and its pace with a share of them.
  std::function<GroupDuty(std::size_t job, const Placement& placement)> traffic;
  std::function<JobPace(std::size_t job, const Placement& placement, const std::map<int, double>& share)>
      shared_pace;
};

// One stretch of a job on GPUs: it starts, pays `restart_s` (after a preemption),
// trains `iterations`, and either ends or writes a checkpoint until `end_s`.
struct Segment {
  Placement placement;
  double start_s = 0.0;
  double restart_s = 0.0;
  double train_s = 0.0;       // the iterations it completed
  double lost_s = 0.0;        // a partial iteration cut off by a preemption
  double checkpoint_s = 0.0;  // written before the GPUs go back (preempted)
  double end_s = 0.0;
  long long iterations = 0;
  JobPace pace;  // at its start
  // Later paces, as neighbours sharing its leaf groups' uplinks come and go: (from, pace).
  std::vector<std::pair<double, JobPace>> pace_changes;
  // Under node failures: the share of its training time spent writing its periodic
  // checkpoints, C / (tau + C) (its pace includes them).
  double checkpoint_share = 0.0;
  bool preempted = false;
  bool failed = false;  // a node of it failed here
  bool resized = false;  // an elastic job's size changed here (docs/cluster.md, "Elastic jobs")
};

struct JobRecord {
  std::vector<Segment> segments;
  double end_s = 0.0;
  bool finished = false;
};

// The number of GPUs in use from `time_s` on, one point per change.
struct UsagePoint {
  double time_s = 0.0;
  long long busy_gpus = 0;
  int waiting_jobs = 0;
};

// A node out of service: from its failure to its repair.
struct NodeOutage {
  int node = 0;
  double from_s = 0.0;
  double to_s = 0.0;
};

struct ScheduleResult {
  std::vector<JobRecord> jobs;  // in the workload's order
  std::vector<UsagePoint> usage;
  std::vector<NodeOutage> outages;
  double makespan_s = 0.0;  // the last job's end
};

ScheduleResult run_schedule(const config::ClusterWorkload& w, const JobTimer& timer);

}  // namespace trainsim::cluster
