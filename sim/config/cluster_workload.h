#pragma once
// A shared cluster and the jobs submitted to it (`trainsim cluster`, docs/cluster.md):
// what scenario/cluster_workload_reader.cpp reads, resolved (plain data).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "config/scenario.h"
#include "config/sweep_spec.h"

namespace trainsim::config {

// The order jobs are started in, and what may jump it (docs/cluster.md, "Policies").
enum class SchedulerPolicy {
  kFifo,      // arrival order; the first job that does not fit blocks the rest
  kBackfill,  // arrival order, EASY backfill behind the first job's reservation (Lifka 1995)
  kPriority   // priority order, EASY backfill, and preemption of lower priorities when enabled
};

// How a job's nodes are chosen (docs/cluster.md, "Placement").
enum class PlacementPolicy {
  kTopologyAware,  // under the fewest leaf groups and pods that hold the job
  kBlind           // free nodes in a seeded random order: names that say nothing of the topology
};

struct SchedulerConfig {
  SchedulerPolicy policy = SchedulerPolicy::kFifo;
  PlacementPolicy placement = PlacementPolicy::kTopologyAware;
  bool preemption = true;  // kPriority only
  bool contention = true;  // jobs sharing a leaf group's uplinks share their bandwidth
  std::uint64_t seed = 1;  // kBlind's node order
};

struct ClusterJob {
  std::string name;
  double arrival_s = 0.0;
  int gpus = 0;
  int priority = 0;  // higher runs first under kPriority
  long long iterations = 0;
  // A trace's job: its measured run time, from which its iterations follow (as many
  // as run that long alone: cluster::resolve_trace_lengths); iterations is 0 until then.
  std::optional<double> trace_duration_s;
  // The job's own scenario on `gpus` GPUs of the cluster, its nodes packed: a
  // whole-node job on gpus / gpus_per_node nodes, a smaller one on one node of
  // `gpus` GPUs. Its failures section's checkpoint settings price a preemption.
  Scenario scenario;
  // The scenario document as read (the cluster's section in place): jobs with the
  // same one share their simulations.
  std::string scenario_key;

  // An elastic job ("gpus": {"min", "max"}; docs/cluster.md, "Elastic jobs"): the
  // whole-node sizes it may run at, smallest first, each with its scenario on that
  // many GPUs; `gpus` and `scenario` are then the largest's. Empty: a fixed size.
  struct Size {
    int gpus = 0;
    Scenario scenario;
    std::string scenario_key;
    std::string layout;  // the best layout's label, when searched (layout_search)
  };
  std::vector<Size> elastic;
  // "layout_space": the layout at each size is the best of this sweep space (docs/cluster.md,
  // "Best layouts"), one cluster option per size; cluster::resolve_best_layouts fills
  // `elastic` (or `scenario` for a fixed size) from it. `scenario` is the job's base
  // (no parallelism) until then.
  std::optional<SweepSpec> layout_search;
  std::string layout;  // a fixed-size job's searched layout (an elastic one's are in `elastic`)
  [[nodiscard]] int min_gpus() const { return elastic.empty() ? gpus : elastic.front().gpus; }
  // The sizes it may run at, largest first.
  [[nodiscard]] std::vector<int> sizes_largest_first() const {
    if (elastic.empty()) return {gpus};
    std::vector<int> out;
    for (auto it = elastic.rbegin(); it != elastic.rend(); ++it) out.push_back(it->gpus);
    return out;
  }
};

// Node failures of the shared cluster (docs/cluster.md, "Failures"): each node fails
// after exponential times of mean `node_mtbf_s`, is repaired `repair_time_s` later;
// its jobs lose the work since their last checkpoint and restart.
struct ClusterFailures {
  double node_mtbf_s = 0.0;
  double repair_time_s = 0.0;
  std::uint64_t seed = 1;
};

struct ClusterWorkload {
  std::string name;
  std::string source_file;
  hw::ClusterSpec cluster;
  SchedulerConfig scheduler;
  std::vector<ClusterJob> jobs;
  std::optional<ClusterFailures> failures;  // none: nodes never fail
  // What reading a trace left out, and why (printed with the results).
  std::vector<std::string> notes;
};

}  // namespace trainsim::config
