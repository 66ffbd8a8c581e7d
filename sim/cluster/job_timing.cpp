#include "cluster/job_timing.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <set>
#include <stdexcept>

#include "core/parallel.h"
#include "execution/full_run.h"
#include "execution/simulate.h"
#include "network/topology_builders.h"
#include "report/microbatch_extrapolation.h"
#include "execution/utilization.h"
#include "sweep/evaluate.h"
#include "sweep/microbatch_extrapolation.h"
#include "workload/memory.h"

namespace trainsim::cluster {

namespace {

// The job's memory on its GPUs (at every size of an elastic job), checked before any timing.
void check_memory(const config::ClusterJob& job) {
  std::vector<std::pair<int, const config::Scenario*>> sizes{{job.gpus, &job.scenario}};
  for (const config::ClusterJob::Size& size : job.elastic) sizes.emplace_back(size.gpus, &size.scenario);
  for (const auto& [gpus, s] : sizes) {
    const double peak = workload::estimate_memory(s->model, s->training, s->parallel).total();
    const double capacity = s->cluster.gpu.memory_capacity_bytes;
    if (peak > capacity)
      throw std::invalid_argument(fmt::format("job \"{}\": its layout needs {:.1f} GiB per GPU on {} GPUs, above the "
                                              "{:.1f} GiB of a {}; give it more GPUs, recomputation or ZeRO",
                                              job.name, peak / 1073741824.0, gpus, capacity / 1073741824.0,
                                              s->cluster.gpu.name));
  }
}

PreemptionCost preemption_cost(const config::Scenario& s, const std::optional<config::ClusterFailures>& failures) {
  const faults::FailureConfig f = s.failures.value_or(faults::FailureConfig{});
  const faults::CheckpointCost c = faults::checkpoint_cost(exec::checkpoint_size_of(s, f), f);
  PreemptionCost cost{c.blocking_s, f.restart_overhead_s + c.reload_s, f.detection_time_s, {}};
  if (failures) {
    const std::optional<double> given = f.checkpoint_interval_s;
    const double blocking = c.blocking_s;
    const double mtbf = failures->node_mtbf_s;
    cost.checkpoint_interval = [given, blocking, mtbf](int nodes) {
      return given ? *given : faults::daly_interval(blocking, mtbf / std::max(1, nodes));
    };
  }
  return cost;
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
    preemption_.push_back(preemption_cost(w.jobs[j].scenario, w.failures));
    std::vector<int> view = job_view(shape_, alone_placement_.back());
    if (seen.insert({w.jobs[j].scenario_key, view}).second) distinct.emplace_back(j, std::move(view));
  }
  std::vector<JobPace> paces(distinct.size());
  core::parallel_for(distinct.size(), threads, [&](std::size_t i) {
    paces[i] = simulate(distinct[i].first, w.jobs[distinct[i].first].gpus, distinct[i].second);
  });
  for (std::size_t i = 0; i < distinct.size(); ++i)
    cache_.emplace(std::pair{w.jobs[distinct[i].first].scenario_key, distinct[i].second}, paces[i]);
  for (std::size_t j = 0; j < w.jobs.size(); ++j)
    alone_.push_back(cache_.at({w.jobs[j].scenario_key, job_view(shape_, alone_placement_[j])}));
}

JobTiming::SizeRef JobTiming::size_of(std::size_t job, long long gpus) const {
  const config::ClusterJob& j = w_.jobs[job];
  for (const config::ClusterJob::Size& s : j.elastic)
    if (s.gpus == gpus) return {s.scenario, s.scenario_key};
  if (!j.elastic.empty() || gpus != j.gpus)
    throw std::logic_error(fmt::format("job \"{}\" does not run on {} GPUs", j.name, gpus));
  return {j.scenario, j.scenario_key};
}

JobPace JobTiming::pace(std::size_t job, const Placement& p) {
  std::vector<int> view = job_view(shape_, p);
  const auto key = std::pair{size_of(job, p.gpus()).key, view};
  if (const auto it = cache_.find(key); it != cache_.end()) return it->second;
  return cache_.emplace(key, simulate(job, p.gpus(), view)).first->second;
}

config::Scenario JobTiming::placed(std::size_t job, long long gpus, const std::vector<int>& view) const {
  config::Scenario s = size_of(job, gpus).scenario;
  if (!view.empty()) {
    s.cluster.inter_node.node_groups = view;
    s.cluster.inter_node.tiers = shape_.tiers;
  }
  return s;
}

GroupDuty JobTiming::traffic(std::size_t job, const Placement& p) {
  const JobView view = view_of(shape_, p);
  if (view.node_groups.empty()) return {};
  const auto key = std::pair{size_of(job, p.gpus()).key, view.node_groups};
  auto it = traffic_cache_.find(key);
  if (it == traffic_cache_.end())
    it = traffic_cache_.emplace(key, simulate_traffic(job, p.gpus(), view.node_groups)).first;
  GroupDuty duty;
  for (const auto& [v, d] : it->second)
    if (d > 0.0)
      duty[is_pod_key(v) ? pod_key(view.pod_of_view.at(pod_of_key(v))) : view.group_of_view.at(v)] = d;
  return duty;
}

JobPace JobTiming::shared_pace(std::size_t job, const Placement& p, const std::map<int, double>& share) {
  const JobView view = view_of(shape_, p);
  bool shared = false;
  // Each view group's (or view pod's) share, from the cluster's group (or pod) it is.
  const auto by_view = [&](const std::map<int, int>& cluster_of_view, bool pods) {
    std::vector<double> out;
    for (const auto& [v, c] : cluster_of_view) {
      const auto it = share.find(pods ? pod_key(c) : c);
      const double s = it == share.end() ? 1.0 : quantized_share(it->second);
      out.resize(static_cast<std::size_t>(v) + 1, 1.0);
      out[static_cast<std::size_t>(v)] = s;
      shared = shared || s < 1.0;
    }
    return out;
  };
  const std::vector<double> groups = by_view(view.group_of_view, false);
  const std::vector<double> pods = by_view(view.pod_of_view, true);
  if (!shared) return pace(job, p);
  const auto key = std::tuple{size_of(job, p.gpus()).key, view.node_groups, groups, pods};
  if (const auto it = shared_cache_.find(key); it != shared_cache_.end()) return it->second;
  return shared_cache_.emplace(key, simulate(job, p.gpus(), view.node_groups, groups, pods)).first->second;
}

// A flow-model run of the job's steady state on its view (the longest of the
// micro-batch extrapolation's short runs when it has them): each view group's
// uplink bytes, up and down apart, over the uplinks' capacity and the run's time.
std::map<int, double> JobTiming::simulate_traffic(std::size_t job, long long gpus, const std::vector<int>& view) const {
  config::Scenario s = placed(job, gpus, view);
  s.simulation.network_model = config::NetworkModel::kFlow;
  if (const auto counts = report::extrapolation_counts(s))
    workload::set_microbatches_per_replica(s.training, s.parallel, (*counts)[2]);
  exec::SimulateOptions options;
  options.memory_timeline = false;
  options.link_counters = false;
  exec::SimulationOutput out;
  try {
    out = exec::simulate(s, options);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(fmt::format("job \"{}\": {}", w_.jobs[job].name, e.what()));
  }
  // The uplinks: links from a leaf (tier 1) to a tier-2 switch and back, keyed by the
  // leaf's group; in a 3-tier tree, from an aggregation switch to a core and back, keyed
  // pod_key(its pod).
  const net::Topology topology = net::build_topology(s.cluster);
  struct Load {
    double up_bytes = 0, down_bytes = 0, up_capacity = 0, down_capacity = 0;
  };
  std::map<std::string, std::pair<int, bool>> uplink;  // name -> (view group, upward)
  std::map<int, Load> load;
  for (std::uint32_t l = 0; l < topology.num_links(); ++l) {
    const net::LinkView v = topology.link(l);
    const net::VertexData& from = topology.vertex(v.from);
    const net::VertexData& to = topology.vertex(v.to);
    if (from.kind != net::VertexKind::kSwitch || to.kind != net::VertexKind::kSwitch) continue;
    const bool up = from.tier < to.tier;
    const net::VertexData& below = up ? from : to;
    const net::VertexData& above = up ? to : from;
    if (below.group < 0 || above.tier != below.tier + 1) continue;
    const int group = below.tier == 1 ? below.group : pod_key(below.group);
    uplink[topology.link_name(l)] = {group, up};
    (up ? load[group].up_capacity : load[group].down_capacity) += v.capacity;
  }
  for (const exec::LinkUsage& u : out.network.links)
    if (const auto it = uplink.find(u.name); it != uplink.end())
      (it->second.second ? load[it->second.first].up_bytes : load[it->second.first].down_bytes) += u.bytes;
  const double seconds = core::to_seconds(out.timeline.makespan);
  std::map<int, double> duty;
  for (const auto& [group, l] : load)
    duty[group] = std::min(1.0, std::max(l.up_bytes / (l.up_capacity * seconds),
                                         l.down_bytes / (l.down_capacity * seconds)));
  return duty;
}

JobPace JobTiming::simulate(std::size_t job, long long gpus, const std::vector<int>& view,
                            const std::vector<double>& share, const std::vector<double>& pod_share) const {
  config::Scenario s = placed(job, gpus, view);
  s.cluster.inter_node.group_uplink_share = share;
  s.cluster.inter_node.pod_uplink_share = pod_share;
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
          [this](std::size_t job) { return preemption(job); },
          [this](std::size_t job, const Placement& p) { return traffic(job, p); },
          [this](std::size_t job, const Placement& p, const std::map<int, double>& share) {
            return shared_pace(job, p, share);
          }};
}

}  // namespace trainsim::cluster
