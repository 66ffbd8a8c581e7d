#include "cluster/job_timing.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <set>
#include <stdexcept>

#include "core/parallel.h"
#include "execution/full_run.h"
#include "execution/utilization.h"
#include "sweep/evaluate.h"
#include "sweep/microbatch_extrapolation.h"
#include "workload/memory.h"

namespace trainsim::cluster {

namespace {

// The job's memory on its GPUs, checked before any timing.
void check_memory(const config::ClusterJob& job) {
  const config::Scenario& s = job.scenario;
  const double peak = workload::estimate_memory(s.model, s.training, s.parallel).total();
  const double capacity = s.cluster.gpu.memory_capacity_bytes;
  if (peak > capacity)
    throw std::invalid_argument(fmt::format("job \"{}\": its layout needs {:.1f} GiB per GPU, above the {:.1f} GiB of a "
                                            "{}; give it more GPUs, recomputation or ZeRO",
                                            job.name, peak / 1073741824.0, capacity / 1073741824.0,
                                            s.cluster.gpu.name));
}

PreemptionCost preemption_cost(const config::Scenario& s) {
  const faults::FailureConfig f = s.failures.value_or(faults::FailureConfig{});
  const faults::CheckpointCost c = faults::checkpoint_cost(exec::checkpoint_size_of(s, f), f);
  return {c.blocking_s, f.restart_overhead_s + c.reload_s};
}

}  // namespace

JobTiming::JobTiming(const config::ClusterWorkload& w, int threads) : w_(w), shape_(fabric_shape(w.cluster)) {
  // Alone: on the empty cluster, placed topology-aware (the best a job can get).
  const NodeState empty(shape_, config::PlacementPolicy::kTopologyAware, w.scheduler.seed);
  std::vector<std::pair<std::size_t, std::vector<int>>> distinct;  // (first job, view)
  std::set<std::pair<std::string, std::vector<int>>> seen;
  for (std::size_t j = 0; j < w.jobs.size(); ++j) {
    check_memory(w.jobs[j]);
    alone_placement_.push_back(*empty.place(w.jobs[j].gpus));
    preemption_.push_back(preemption_cost(w.jobs[j].scenario));
    std::vector<int> view = job_view(shape_, alone_placement_.back());
    if (seen.insert({w.jobs[j].scenario_key, view}).second) distinct.emplace_back(j, std::move(view));
  }
  std::vector<JobPace> paces(distinct.size());
  core::parallel_for(distinct.size(), threads,
                     [&](std::size_t i) { paces[i] = simulate(distinct[i].first, distinct[i].second); });
  for (std::size_t i = 0; i < distinct.size(); ++i)
    cache_.emplace(std::pair{w.jobs[distinct[i].first].scenario_key, distinct[i].second}, paces[i]);
  for (std::size_t j = 0; j < w.jobs.size(); ++j)
    alone_.push_back(cache_.at({w.jobs[j].scenario_key, job_view(shape_, alone_placement_[j])}));
}

JobPace JobTiming::pace(std::size_t job, const Placement& p) {
  std::vector<int> view = job_view(shape_, p);
  const auto key = std::pair{w_.jobs[job].scenario_key, view};
  if (const auto it = cache_.find(key); it != cache_.end()) return it->second;
  return cache_.emplace(key, simulate(job, view)).first->second;
}

JobPace JobTiming::simulate(std::size_t job, const std::vector<int>& view) const {
  config::Scenario s = w_.jobs[job].scenario;
  if (!view.empty()) {
    s.cluster.inter_node.node_groups = view;
    s.cluster.inter_node.tiers = shape_.tiers;
  }
  sweep::PointResult r;
  try {
    if (!sweep::extrapolate_microbatches(s, sweep::time_point, r)) sweep::time_point(s, r);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(fmt::format("job \"{}\": {}", w_.jobs[job].name, e.what()));
  }
  return {r.iteration_time_s, exec::gpu_utilization(r.compute_busy_s, r.compute_ranks, r.iteration_time_s)};
}

void resolve_trace_lengths(config::ClusterWorkload& w, const JobTiming& timing) {
  for (std::size_t j = 0; j < w.jobs.size(); ++j)
    if (w.jobs[j].trace_duration_s)
      w.jobs[j].iterations =
          std::max(1LL, std::llround(*w.jobs[j].trace_duration_s / timing.alone(j).iteration_s));
}

JobTimer JobTiming::timer() {
  return {[this](std::size_t job, const Placement& p) { return pace(job, p); },
          [this](std::size_t job) { return preemption(job); }};
}

}  // namespace trainsim::cluster
