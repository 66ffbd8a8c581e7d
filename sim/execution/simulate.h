#pragma once
// One scenario, simulated: cost models chosen, task graph built and executed.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/progress.h"
#include "execution/async_modes.h"
#include "execution/executor.h"
#include "execution/timeline.h"
#include "hardware/compute_model.h"
#include "hardware/profiled_compute_model.h"
#include "network/collective_engine.h"
#include "network/topology.h"
#include "config/scenario.h"
#include "workload/iteration_builder.h"
#include "workload/memory.h"

namespace trainsim::exec {

// A value over time, for the trace's counter tracks (e.g. a link's utilization).
struct CounterSeries {
  std::string name;
  std::vector<std::pair<core::Time, double>> points;  // (time, value) at every change
};

struct LinkUsage {
  std::string name;  // "from->to"
  double bytes = 0.0;
  double capacity = 0.0;  // B/s
};

// What the network model saw (flow model; the analytic one records no traffic).
struct NetworkReport {
  std::string topology;
  std::uint64_t flows = 0;
  std::uint64_t solves = 0;
  std::vector<LinkUsage> links;  // links that carried traffic, by link id
  std::vector<CounterSeries> counters;
};

// How a calibration profile priced the compute kernels of one iteration on the
// simulated ranks (docs/results.md, "calibration").
struct CalibrationUsage {
  long long measured = 0;  // from the profile: a measured time or interpolated between measurements
  long long fallback = 0;  // from the roofline
  // From the profile's rows of a stand-in kernel (PyTorch's attention without
  // sdpa rows: our flash kernel's rate); their reasons are in fallback_reasons.
  long long stand_in = 0;
  // Collectives of the first iteration (network/measured_collectives.h): priced by
  // the profile's measured collectives, or by the network model.
  long long collectives_measured = 0;
  long long collectives_modeled = 0;
  // "op: why", distinct, the first kMaxReasons in task order (deterministic).
  std::vector<std::string> fallback_reasons;
  static constexpr std::size_t kMaxReasons = 20;
  // What the fallback ran on at the training precision: the profile's copy
  // bandwidth, GEMM efficiency curve and launch overhead where it has them.
  hw::FallbackEfficiency fallback_efficiency;
};

// One GPU's memory over time (execution/memory_timeline.h, track_memory).
struct MemoryTimeline {
  int rank = 0;
  CounterSeries series;  // bytes in use, at every change
  double peak_bytes = 0.0;
  core::Time peak_time = 0;
  std::string peak_task;  // the task whose start or end reaches the peak
};

struct SimulationOutput {
  workload::IterationGraph iteration;
  Timeline timeline;
  workload::MemoryEstimate memory;
  std::string compute_model;
  std::string network_model;
  NetworkReport network;
  std::optional<CalibrationUsage> calibration;  // with a calibration profile only
  AsyncModes async;  // mode async_ps or local_sgd
  MemoryTimeline memory_over_time;  // of the first rank of the stage with the peak
  // A mixed cluster: the pool whose GPUs set each pipeline stage's pace (empty: one GPU type).
  std::vector<int> stage_pools;
};

// Per-rank differences from the healthy cluster (the full-run replay's cluster
// states, docs/reliability.md).
struct SimulateOptions {
  // (global rank, slowdown): that GPU's compute kernels take 1 + slowdown times as
  // long. In synchronous training every collective waits for its slowest member, so
  // a replica runs at the pace of its slowest rank and the representative that
  // stands for the rank takes the largest slowdown of the ranks it stands for; the
  // symmetry reduction (DESIGN.md, "Scale") stays exact for the maximum.
  std::vector<std::pair<long long, double>> slow_ranks;
  // Called on the simulating thread with the fraction of the executor's work done:
  // the share of the iteration graph's tasks finished (local_sgd: its three runs a
  // third each), about 200 times per run, non-decreasing, the last call with 1.
  // Empty: nothing is counted. Does not change the results.
  core::ProgressCallback progress;
  // False: memory_over_time is left empty (the sweep, which reports the memory
  // estimate and not the timeline; 6% of its CPU time). Does not change the rest.
  bool memory_timeline = true;
  // False: network.counters is left empty (the flow model's utilization over
  // time of rank 0's links, for the trace; the sweep does not write one, and
  // reading the utilizations after every solve cost 4% of its CPU time in the
  // flow model). Does not change the rest.
  bool link_counters = true;
  // The scenario's memory estimate when the caller has made it already (the
  // sweep checks it before it simulates a point); none: simulate() makes it.
  std::optional<workload::MemoryEstimate> memory;
};

// A mixed cluster's hardware for the executor (docs/model.md, "Heterogeneous
// jobs"): each pool's compute model, overlap factors and host, and each stage's
// simulated rank on the pool of its slowest GPUs (synchronous training waits for
// them; a faster data-parallel replica waits at the gradient reduction). Nothing
// for a cluster of one GPU type.
class MixedHardware {
 public:
  MixedHardware(const config::Scenario& s, const workload::IterationGraph& iteration);
  void apply(Executor& executor) const;
  [[nodiscard]] const std::vector<int>& pace() const { return pace_; }

 private:
  std::vector<std::unique_ptr<hw::ComputeModel>> models_;
  std::vector<Executor::PoolHardware> pools_;
  std::map<int, int> rank_pool_;
  std::vector<int> pace_;
};

// The compute cost model a scenario selects: its calibration profile (measured
// kernels, roofline fallback), else the GPU spec's roofline.
std::unique_ptr<hw::ComputeModel> compute_model_for(const config::Scenario& s);

SimulationOutput simulate(const config::Scenario& s, const SimulateOptions& options = {});

// A task graph built elsewhere (a Chakra trace: scenario/chakra_reader.h) run as
// simulate() runs the scenario's own: on its cluster, network, cost models and
// precision; the memory figures are the scenario's estimate. Synchronous
// training only (std::invalid_argument otherwise). simulate_graph(s,
// build_iteration_graph(s...)) gives simulate(s).
SimulationOutput simulate_graph(const config::Scenario& s, workload::IterationGraph iteration,
                                const SimulateOptions& options = {});

// The network simulate() builds for `s`: its topology (with dedicated parameter
// servers as nodes of their own) and the collective planner over it.
net::Topology network_topology(const config::Scenario& s);
net::CollectivePlanner planner_for(const config::Scenario& s, const net::Topology& topology);

// The step time simulate(s, options) would give (its timeline's makespan per
// iteration) for `options.slow_ranks` alone, from `healthy` = simulate(s)'s
// iteration graph and `planner` (planner_for(s, network_topology(s)), one
// thread at a time): the graph is not built again, and the planner's routes are
// those of earlier calls (the failure replay's straggler states, which change no
// collective; docs/architecture.md, "Engine speed"). Synchronous training only
// (std::invalid_argument otherwise).
core::Time step_with_slow_ranks(const config::Scenario& s, const SimulationOutput& healthy,
                                net::CollectivePlanner& planner, const SimulateOptions& options);

}  // namespace trainsim::exec
