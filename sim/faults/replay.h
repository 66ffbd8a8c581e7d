#pragma once
// Full-run replay (docs/reliability.md): a discrete-event simulation of a whole
// training run at iteration granularity, with failures, recovery, checkpoints,
// stragglers, degraded links and maintenance; Monte Carlo over seeded trials.
// The iteration time of each cluster state comes from a callback that the top
// layer answers with the iteration simulator (faults never depends on execution).
#include <compare>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "core/time.h"
#include "faults/checkpoint.h"
#include "faults/failure_config.h"
#include "hardware/power.h"

namespace trainsim::faults {

// The cluster as one iteration sees it.
struct ClusterState {
  int lost_replicas = 0;       // elastic shrink: data-parallel replicas out of the job
  bool degraded_link = false;  // inter-node bandwidth scaled by degraded_link_bandwidth
  // Per-rank compute slowdown (rank, factor - 1), sorted by rank; the trial's
  // stragglers. Per rank so that asynchronous modes can slow one worker alone.
  std::vector<std::pair<long long, double>> slow_ranks;
  auto operator<=>(const ClusterState&) const = default;
};

struct StatePerformance {
  core::Time iteration_time = 0;
  long long tokens_per_iteration = 0;
};

// Must be a pure function of the state. monte_carlo() asks it once per distinct
// state and caches the answer; trials on different threads may ask it for
// different states at the same time, so it must be safe to call concurrently.
using IterationOracle = std::function<StatePerformance(const ClusterState&)>;

// Everything a trial needs, resolved to integer nanoseconds and counts.
struct ReplayConfig {
  long long train_tokens = 0;
  long long num_gpus = 1;
  long long num_nodes = 1;
  int data_parallel = 1;
  int replicas_per_node_loss = 1;  // replicas an out-of-service node takes with it (elastic shrink)
  std::vector<JobProcess> processes;
  Distribution distribution = Distribution::kExponential;
  double weibull_shape = 1.0;

  core::Time detection = 0;
  core::Time restart = 0;
  core::Time reload = 0;
  RecoveryPolicy policy = RecoveryPolicy::kHotSpare;
  long long hot_spares = -1;  // -1: as many as needed
  core::Time repair = 0;

  core::Time checkpoint_interval = 0;  // training time between checkpoints; 0: none
  core::Time checkpoint_blocking = 0;
  core::Time checkpoint_background = 0;  // async: storage write after the blocking copy

  double straggler_fraction = 0.0;
  double straggler_slowdown = 0.0;
  double degraded_mean_s = 0.0;  // job-level mean time between degradation episodes; 0: none
  core::Time degraded_duration = 0;
  core::Time maintenance_interval = 0;  // 0: none
  core::Time maintenance_duration = 0;

  // Energy (hw::energy_kwh): watts while iterating, while stopped, and for the whole wall time.
  hw::PowerDraw power;
  double pue = 1.0;
  long long allocated_gpus = 1;  // the job's GPUs plus hot spares (what is paid for)
  double price_per_gpu_hour = 0.0;

  core::Time horizon = 0;  // give up (throw) past this wall time; 0: 100 x the failure-free time
};

// A finer piece of an event, for the Perfetto trace (docs/results.md, "Perfetto
// trace"): a recovery splits into down (a repair wait, or a recovery started
// again by more failures), restart and reload; maintenance into the window,
// restart and reload. The phases of an event tile it.
struct Phase {
  std::string category;  // down, restart, reload, maintenance
  std::string name;
  core::Time start = 0;
  core::Time end = 0;
};

struct Event {
  std::string category;  // train, checkpoint, failure, restart, maintenance, degraded
  std::string name;
  core::Time start = 0;
  core::Time end = 0;
  std::vector<Phase> phases;  // empty: the event is one piece
  // Runs beside the job's own sequence of states (a degraded-link episode, a
  // background checkpoint write); every other event follows the previous one.
  bool concurrent = false;
};

// One interruption of the recorded trial: when, and which process failed.
struct FailureMark {
  core::Time at = 0;
  Component component = Component::kNode;
};

struct TrialResult {
  core::Time wall = 0;
  long long interruptions = 0;
  long long checkpoints = 0;
  long long maintenance_stops = 0;
  long long iterations = 0;          // iterations run, lost ones included
  core::Time running = 0;            // time iterating (lost work included)
  core::Time lost_work = 0;          // iterating whose progress a failure threw away
  core::Time checkpointing = 0;      // training stopped for checkpoints
  core::Time down = 0;               // detection, repair waits, restarts, reloads, maintenance
  core::Time degraded = 0;           // time iterating on a degraded link
  core::Time shrunk = 0;             // time iterating with replicas out
  long long stragglers = 0;
  double energy_kwh = 0.0;
  double cost_usd = 0.0;
  std::vector<Event> events;  // recorded for one trial only
  // Every interruption of the recorded trial, failures during a recovery
  // included, while events are kept (the same cap).
  std::vector<FailureMark> failures;
};

// One trial with its own generator. `record` keeps its events (capped).
TrialResult replay_trial(const ReplayConfig& c, const IterationOracle& oracle, std::uint64_t seed,
                         std::uint64_t trial, bool record);

struct Percentiles {
  double p10 = 0, p50 = 0, p90 = 0, mean = 0, stddev = 0;
};

struct MonteCarloResult {
  int trials = 0;            // the trials aggregated
  int trials_requested = 0;  // more than `trials` when the replay was stopped early
  int threads = 0;
  Percentiles time_to_train_s;
  double ideal_time_s = 0.0;  // iterations x healthy iteration time, no checkpoints
  double goodput = 0.0;       // ideal time / mean wall time
  double expected_interruptions = 0.0;
  double interruptions_standard_error = 0.0;
  double expected_checkpoints = 0.0;
  double lost_gpu_hours = 0.0;  // mean of allocated GPUs x (wall - ideal)
  double lost_work_s = 0.0, checkpointing_s = 0.0, down_s = 0.0, degraded_s = 0.0, shrunk_s = 0.0;
  double stragglers = 0.0;
  double cost_usd = 0.0;
  double energy_kwh = 0.0;
  std::vector<TrialResult> per_trial;  // in trial order (events only on trial 0)
};

// Runs `trials` trials on `threads` threads (0: std::thread::hardware_concurrency);
// trial i uses core::Rng(seed).split(i), so the result does not depend on the
// thread count. Throws std::runtime_error when a trial passes the horizon.
// `progress`, when given, is called with the fraction of trials done (never
// decreasing, the last call with 1), one call at a time, from the threads that
// run the trials (core::parallel_for). The oracle is asked once per distinct
// state (core::OnceCache). Once `stop()` (given) returns true no further trial
// starts: trials start in index order and every started one ends, so the result
// aggregates trials 0..K-1, exactly what a run of K trials gives; with K = 0
// (stopped before the first trial ended) only `trials_requested` is set.
MonteCarloResult monte_carlo(const ReplayConfig& c, const IterationOracle& oracle, std::uint64_t seed, int trials,
                             int threads, const std::function<void(double)>& progress = {},
                             const std::function<bool()>& stop = {});

}  // namespace trainsim::faults
