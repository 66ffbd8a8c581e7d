#pragma once
// The full-run replay wired to the iteration simulator (docs/reliability.md):
// the faults module replays the whole training at iteration granularity and asks
// this layer for the iteration time of each cluster state, which it answers by
// simulating an iteration of a modified scenario (slower ranks, a degraded
// inter-node network, fewer data-parallel replicas), once per distinct state.
#include <functional>
#include <string>
#include <vector>

#include "execution/simulate.h"
#include "faults/checkpoint.h"
#include "faults/replay.h"
#include "config/scenario.h"

namespace trainsim::exec {

struct FullRunReport {
  faults::MonteCarloResult monte_carlo;
  faults::CheckpointSize checkpoint_size;
  faults::CheckpointCost checkpoint_cost;
  double checkpoint_interval_s = 0.0;
  bool checkpoint_interval_auto = false;
  double young_interval_s = 0.0;
  double mean_time_to_interrupt_s = 0.0;
  std::vector<faults::JobProcess> processes;
  double iteration_time_s = 0.0;  // healthy, as the replay uses it (whole nanoseconds)
  long long iterations = 0;       // failure-free iterations to train
  double gpu_utilization = 0.0;   // compute-stream busy fraction of the healthy iteration
  int states_simulated = 0;       // iteration simulations the replay asked for beyond the healthy one
  // Set by the caller that stopped the Monte Carlo early ("SIGINT"): the figures
  // are those of monte_carlo.trials of monte_carlo.trials_requested trials.
  std::string stopped_by;
};

// Needs s.failures and s.training.train_tokens. `healthy` is the scenario's own
// simulation. Throws std::invalid_argument for a layout the policy cannot shrink.
// `progress` gets the fraction of Monte Carlo trials done (faults::monte_carlo);
// `stop` ends the Monte Carlo early (the report then aggregates the trials that
// ran: monte_carlo.trials < monte_carlo.trials_requested).
FullRunReport simulate_full_run(const config::Scenario& s, const SimulationOutput& healthy,
                                const core::ProgressCallback& progress = {}, const std::function<bool()>& stop = {});

// The job's checkpoint: its model states, or failures.checkpoint_size when given.
faults::CheckpointSize checkpoint_size_of(const config::Scenario& s, const faults::FailureConfig& f);

// The iteration time (ns) and tokens of one simulated iteration.
faults::StatePerformance performance_of(const SimulationOutput& out);

}  // namespace trainsim::exec
