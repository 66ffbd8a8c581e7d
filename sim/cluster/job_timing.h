#pragma once
// A job's iteration time on its placement, from the job simulation itself
// (docs/cluster.md, "Iteration time"): the job's scenario with its nodes under the
// leaf groups they hold (hw::InterNodeNetwork::node_groups), simulated and
// extrapolated over its micro-batches as `trainsim sweep` times a point. One
// simulation per distinct scenario and placement shape.
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "cluster/schedule.h"

namespace trainsim::cluster {

class JobTiming {
 public:
  // Simulates every distinct job alone (topology-aware on the empty cluster) on `threads`
  // threads (0: every core). Throws std::invalid_argument naming the job when its
  // layout does not fit its GPUs' memory or the simulator cannot build it.
  JobTiming(const config::ClusterWorkload& w, int threads);

  [[nodiscard]] JobPace pace(std::size_t job, const Placement& p);
  [[nodiscard]] PreemptionCost preemption(std::size_t job) const { return preemption_[job]; }
  // On the empty cluster, placed topology-aware: the reference of its slowdowns.
  [[nodiscard]] const JobPace& alone(std::size_t job) const { return alone_[job]; }
  [[nodiscard]] const Placement& alone_placement(std::size_t job) const { return alone_placement_[job]; }
  [[nodiscard]] std::size_t simulations() const { return cache_.size(); }
  // The timer run_schedule() asks; valid while this object lives.
  [[nodiscard]] JobTimer timer();

 private:
  [[nodiscard]] JobPace simulate(std::size_t job, const std::vector<int>& view) const;

  const config::ClusterWorkload& w_;
  FabricShape shape_;
  std::vector<JobPace> alone_;
  std::vector<Placement> alone_placement_;
  std::vector<PreemptionCost> preemption_;
  std::map<std::pair<std::string, std::vector<int>>, JobPace> cache_;
};

// A trace's jobs get the iterations that run as long as they ran, alone:
// max(1, round(duration / iteration time alone)).
void resolve_trace_lengths(config::ClusterWorkload& w, const JobTiming& timing);

}  // namespace trainsim::cluster
