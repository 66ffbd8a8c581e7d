#pragma once
// A job's iteration time on its placement, from the job simulation itself
// (docs/cluster.md, "Iteration time"): the job's scenario with its nodes under the
// leaf groups they hold (hw::InterNodeNetwork::node_groups), simulated and
// extrapolated over its micro-batches as `trainsim sweep` times a point. One
// simulation per distinct scenario and placement shape.
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "cluster/contention.h"
#include "cluster/schedule.h"

namespace trainsim::cluster {

class JobTiming {
 public:
  // Simulates every distinct job alone (topology-aware on the empty cluster) on `threads`
  // threads (0: every core). Throws std::invalid_argument naming the job when its
  // layout does not fit its GPUs' memory or the simulator cannot build it.
  JobTiming(const config::ClusterWorkload& w, int threads);

  [[nodiscard]] JobPace pace(std::size_t job, const Placement& p);
  // Its duty on each cluster group's uplinks on `p`, alone (cluster/contention.h),
  // from a flow-model simulation of its steady state; empty on one node or one switch.
  [[nodiscard]] GroupDuty traffic(std::size_t job, const Placement& p);
  // Its pace on `p` with `share` of each cluster group's uplinks, and of each pod's
  // (pod_key), 1 where not given; each share quantized to 1/32.
  [[nodiscard]] JobPace shared_pace(std::size_t job, const Placement& p, const std::map<int, double>& share);
  [[nodiscard]] PreemptionCost preemption(std::size_t job) const { return preemption_[job]; }
  // On the empty cluster, placed topology-aware: the reference of its slowdowns.
  [[nodiscard]] const JobPace& alone(std::size_t job) const { return alone_[job]; }
  [[nodiscard]] const Placement& alone_placement(std::size_t job) const { return alone_placement_[job]; }
  // Job simulations run: paces alone, contended paces and traffic runs.
  [[nodiscard]] std::size_t simulations() const {
    return cache_.size() + shared_cache_.size() + traffic_cache_.size();
  }
  // The timer run_schedule() asks; valid while this object lives.
  [[nodiscard]] JobTimer timer();

 private:
  // The job's scenario document (its key) and scenario on `gpus` GPUs: an elastic
  // job's at that size.
  struct SizeRef {
    const config::Scenario& scenario;
    const std::string& key;
  };
  [[nodiscard]] SizeRef size_of(std::size_t job, long long gpus) const;
  [[nodiscard]] config::Scenario placed(std::size_t job, long long gpus, const std::vector<int>& view) const;
  // `share`, `pod_share`: of each view group's and view pod's uplinks (none: all).
  [[nodiscard]] JobPace simulate(std::size_t job, long long gpus, const std::vector<int>& view,
                                 const std::vector<double>& share = {}, const std::vector<double>& pod_share = {}) const;
  [[nodiscard]] std::map<int, double> simulate_traffic(std::size_t job, long long gpus,
                                                       const std::vector<int>& view) const;

  const config::ClusterWorkload& w_;
  FabricShape shape_;
  std::vector<JobPace> alone_;
  std::vector<Placement> alone_placement_;
  std::vector<PreemptionCost> preemption_;
  std::map<std::pair<std::string, std::vector<int>>, JobPace> cache_;
  std::map<std::tuple<std::string, std::vector<int>, std::vector<double>, std::vector<double>>, JobPace> shared_cache_;
  std::map<std::pair<std::string, std::vector<int>>, std::map<int, double>> traffic_cache_;  // by view group
};

// A trace's jobs get the iterations that run as long as they ran, alone:
// max(1, round(duration / iteration time alone)).
void resolve_trace_lengths(config::ClusterWorkload& w, const JobTiming& timing);

}  // namespace trainsim::cluster
