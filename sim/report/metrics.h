#pragma once
// The figures a run reports (DESIGN.md, "Result file"), computed from the
// simulated timeline (docs/results.md defines each one).
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "execution/full_run.h"
#include "execution/rank_time.h"
#include "execution/utilization.h"
#include "execution/simulate.h"
#include "config/scenario.h"

namespace trainsim::report {

struct Breakdown {
  double compute = 0;                // forward, backward and recomputation kernels
  double exposed_communication = 0;  // compute stream idle while communication runs
  double pipeline_bubble = 0;
  double optimizer = 0;
  double other = 0;  // idle with nothing in flight
};

struct MemoryReport {
  double peak_bytes_per_gpu = 0;
  double capacity_bytes_per_gpu = 0;
  bool fits = true;
  std::string reason;  // why it does not fit
  double weights = 0, gradients = 0, optimizer_states = 0, activations = 0;
  // PyTorch eager: autocast's bf16 weight casts (inside weights) and the cuBLAS
  // workspaces (inside activations) at the peak; 0 otherwise.
  double weight_casts = 0, workspaces = 0;
  double quantized_weight_cache = 0;  // Transformer Engine's cached fp8/fp4 weights, in weights
  int stage = 0;                      // pipeline stage with the peak
  // Over the simulated timeline of that stage's first rank (states, activations
  // from forward to backward, communication buffers in flight): its peak, when,
  // and at which task.
  double timeline_peak_bytes = 0;
  double peak_time_s = 0;
  std::string peak_task;
  double in_flight_microbatches = 1;  // activations alive there, in whole-stage passes
  // Memory the CUDA context holds before any tensor, as the calibration profile
  // measured it (0 without a profile, or one that did not measure it). Counts
  // against the capacity in `fits`; not part of peak_bytes_per_gpu.
  double context_bytes = 0;
  // Host memory (CPU offload): what one GPU's process keeps there at the peak, the
  // node's (x GPUs per node) and the capacity per GPU (cluster.host.memory_per_gpu;
  // 0: not known, not checked). 0 bytes: nothing is offloaded.
  double host_bytes_per_gpu = 0;
  double host_capacity_bytes_per_gpu = 0;
  int gpus_per_node = 1;
  bool host_fits = true;
};

struct LinkSummary {
  std::string name;
  double bytes = 0.0;
  double capacity = 0.0;
  double mean_utilization = 0.0;  // bytes / (capacity x simulated time)
};

// Traffic the flow model saw; the busiest links first (by mean utilization).
struct NetworkSummary {
  std::string topology;
  std::uint64_t flows = 0;
  std::uint64_t solves = 0;
  std::size_t links_used = 0;
  std::vector<LinkSummary> busiest;  // at most kBusiestLinks
  static constexpr std::size_t kBusiestLinks = 10;
};

// The calibration profile behind the compute costs (docs/results.md, "calibration").
struct CalibrationReport {
  std::string profile;  // the path it was read from
  std::string device;
  std::string date;
  bool complete = true;
  long long measured = 0;  // kernels of one iteration priced by the profile
  long long fallback = 0;  // ... and by the roofline
  long long stand_in = 0;  // ... and by the rows of a stand-in kernel (our attention for PyTorch's)
  std::vector<std::string> fallback_reasons;
  long long collectives_measured = 0;  // collectives of one iteration at their measured times
  long long collectives_modeled = 0;   // ... and from the network model
  // The roofline fallback's efficiencies (docs/model.md, "Calibrated costs"):
  // nothing / 0 where the GPU spec's are used.
  std::optional<double> fallback_memory_bandwidth;  // B/s, the profile's largest device copy
  std::size_t fallback_matmul_points = 0;           // points of the measured GEMM efficiency curve
  std::optional<double> launch_overhead_s;          // no kernel takes less
  // The profile's host dispatch times, where they applied (a PyTorch eager step).
  std::optional<hw::HostDispatch> host_dispatch;
  // The profile's inter_node "collectives" rows without "nodes": they price nothing
  // (docs/calibration.md, "nodes"); the summary says so. Not in the result file.
  long long collective_rows_without_nodes = 0;
};

// The asynchronous modes' own figures (docs/results.md, "async").
struct AsyncSummary {
  std::string mode;  // "async_ps" or "local_sgd"
  // async_ps
  int workers = 0;
  int servers = 0;
  int staleness_bound = 0;
  double worker_step_time_s = 0;  // mean time between two updates of one worker
  double updates_per_s = 0;
  double server_utilization = 0;
  double mean_staleness = 0;
  long long max_staleness = 0;
  std::vector<std::pair<long long, long long>> staleness;  // (staleness, updates), ascending
  double bytes_pushed_per_server = 0;  // one worker step, one server
  double bytes_pulled_per_server = 0;
  // local_sgd
  int sync_period = 0;
  double plain_step_s = 0;
  double averaged_step_s = 0;
};

// The iteration time as a distribution (report/step_interval.h).
struct StepInterval {
  double p10 = 0.0;
  double p50 = 0.0;
  double p90 = 0.0;
  double gpu_speed_spread = 0.0;  // sigma_g, the cluster's
  double kernel_time_cv = 0.0;    // c, the GPU's
  double kernels_per_step = 0.0;  // K, compute kernels of one rank in one iteration
  long long gpus = 0;             // R, GPUs that wait for each other every step
  double scaled_s = 0.0;          // V: compute, optimizer and pipeline bubble of the step
};

// Where the measured step time is likely to fall, from the simulator's recorded
// error on the validation corpus (report/prediction_interval.h): the iteration
// time times the record's quantiles of measured / predicted.
struct PredictionInterval {
  double p10 = 0.0;
  double p50 = 0.0;
  double p90 = 0.0;
  int cases = 0;  // corpus cases the quantiles come from
};

// A mixed cluster's pipeline (docs/results.md, "mixed_cluster"): the decoder layers
// of each virtual stage and the pool whose GPUs set each stage's pace.
struct MixedSummary {
  std::vector<long long> stage_layers;
  std::vector<int> stage_pools;
};

struct Metrics {
  std::string scenario;
  long long num_gpus = 0;
  int iterations_simulated = 1;
  double iteration_time_s = 0;
  double tokens_per_iteration = 0;
  double tokens_per_s = 0;
  double model_flops_per_iteration = 0;
  double tflops_per_gpu = 0;
  double mfu = 0;
  double peak_flops_per_gpu = 0;  // the mean over a mixed cluster's GPUs
  std::optional<MixedSummary> mixed;  // a mixed cluster (cluster.pools) only
  Breakdown breakdown_s;
  // What breakdown_s is made from: the first simulated rank's time, over every
  // simulated iteration, stream by stream (the sweep's bottleneck reads it too).
  exec::RankTime measured_rank_time;
  MemoryReport memory;
  long long num_microbatches = 0;
  int gradient_buckets = 0;
  double parameters = 0;
  std::optional<AsyncSummary> async;
  std::optional<double> train_tokens;
  std::optional<double> iterations_to_train;
  std::optional<double> time_to_train_s;
  std::optional<double> cost_usd;
  std::optional<double> energy_kwh;
  // The facility's mean draw over the time to train, PUE included:
  // energy_kwh x 3.6e6 / time_to_train_s (what a power budget must cover on average).
  std::optional<double> average_power_w;
  // The GPUs' compute-stream busy fraction, which sets their power draw
  // (exec::gpu_utilization; docs/model.md, "Energy"), from the busy seconds per
  // iteration summed over the simulated ranks that compute.
  double gpu_utilization = 0;
  double compute_busy_s = 0;
  int compute_ranks = 0;
  std::string compute_model;
  std::string network_model;
  NetworkSummary network;
  std::optional<CalibrationReport> calibration;
  // The full-run replay under failures (scenario "failures"; docs/reliability.md).
  std::optional<exec::FullRunReport> reliability;
  // The iteration time's P10, P50 and P90 (report/step_interval.h); none in the
  // asynchronous modes.
  std::optional<StepInterval> iteration_time_interval;
  // The same for the model's own error (none in the asynchronous modes, which the
  // corpus does not cover).
  std::optional<PredictionInterval> prediction_interval;
};

// What of a simulation grows with its micro-batches: totals over every
// simulated iteration, in whole nanoseconds and counts (the link bytes are sums
// of bytes). compute_metrics() reads these from here and the rest from the
// simulation's output, so that `trainsim run` can give it totals extrapolated
// from short runs (report/microbatch_extrapolation.h).
struct RunTotals {
  core::Time makespan = 0;
  exec::ComputeBusy busy;     // busy.ranks does not grow
  exec::RankTime rank_time;   // of the first simulated rank
  long long kernels = 0;      // compute kernels of the first simulated rank
  std::uint64_t flows = 0;    // the flow model's flows and rate solves
  std::uint64_t solves = 0;
  std::vector<double> link_bytes;  // of out.network.links, in order
  // The calibration profile's kernel and collective counts (exec::CalibrationUsage).
  long long measured = 0, fallback = 0, stand_in = 0, collectives_measured = 0, collectives_modeled = 0;
};
RunTotals run_totals(const exec::SimulationOutput& out);

Metrics compute_metrics(const config::Scenario& s, const exec::SimulationOutput& out);
// The same with the growing parts from `totals`: run_totals(out), or totals for
// the scenario's micro-batches when `out` simulated fewer (then out.iteration's
// tokens, FLOPs and micro-batches and out.memory must be the scenario's).
Metrics compute_metrics(const config::Scenario& s, const exec::SimulationOutput& out, const RunTotals& totals);

// The figures that follow from an iteration time and the iteration's work
// (docs/results.md): the GPU count, tokens/s, TFLOP/s per GPU, MFU, and with
// train_tokens the iterations, time, cost and energy to train (the GPUs drawing
// power by `gpu_utilization`, hardware/power.h). compute_metrics() starts from
// it; the sweep's micro-batch extrapolation (sweep/microbatch_extrapolation.h)
// calls it with an extrapolated time.
Metrics rates(const config::Scenario& s, double iteration_time_s, double tokens_per_iteration,
              double model_flops_per_iteration, double gpu_utilization);

// Time to train, cost and energy become the Monte Carlo means of the replay
// (docs/results.md, "reliability").
void add_reliability(Metrics& m, exec::FullRunReport full_run);

}  // namespace trainsim::report
