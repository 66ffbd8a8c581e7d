#pragma once
// Evaluating the points of a sweep (docs/sweep.md, "Evaluation"): each point is a
// Scenario built in memory from its cluster option and layout, checked by the
// scenario reader's own rules, its memory estimated before any timing, then
// simulated and measured by the same simulate() and compute_metrics() as
// `trainsim run` (with many micro-batches per replica: three shorter copies of
// it, extrapolated; sweep/microbatch_extrapolation.h).
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "report/metrics.h"
#include "sweep/space.h"
#include "workload/memory.h"

namespace trainsim::sweep {

enum class Status { kEvaluated, kDoesNotFit, kRejected };

// A point replayed under the spec's failures (sweep/reliability.h): the full-run
// Monte Carlo's figures (docs/reliability.md).
struct PointReliability {
  int trials = 0;
  double time_to_train_p50_s = 0;
  double time_to_train_p90_s = 0;
  double time_to_train_mean_s = 0;
  double goodput = 0;  // failure-free time / mean wall time
  double expected_interruptions = 0;
  double checkpoint_interval_s = 0;
  std::optional<double> cost_p50_usd;  // with a price: the median trial's cost
  double energy_kwh = 0;               // mean over the trials
};

struct PointResult {
  std::uint64_t id = 0;
  Status status = Status::kRejected;
  std::string reason;   // kRejected: the reason it is counted under
  std::string message;  // kRejected: the library's message
  // The resolved layout (kEvaluated, kDoesNotFit).
  int data = 0;
  long long num_microbatches = 0;
  int zero_stage = 0;
  bool sequence_parallel = false;
  std::string recompute;
  std::string schedule;
  int virtual_stage = 0;
  // Memory (kEvaluated, kDoesNotFit).
  double peak_bytes_per_gpu = 0;
  double capacity_bytes_per_gpu = 0;
  // Timing (kEvaluated).
  double iteration_time_s = 0;
  double tokens_per_s = 0;
  double model_flops_per_iteration = 0;
  double tflops_per_gpu = 0;
  double mfu = 0;
  report::Breakdown breakdown_s;
  // Compute-stream busy seconds per iteration over the simulated ranks that
  // compute, for the GPUs' power draw (report::Metrics).
  double compute_busy_s = 0;
  int compute_ranks = 0;
  std::optional<double> time_to_train_s;
  std::optional<double> cost_usd;
  std::optional<double> energy_kwh;
  // What limits it (docs/sweep.md, "Bottleneck"): communication exposed on each
  // stream of the measured rank, and recomputation.
  double exposed_tp_s = 0;
  double exposed_dp_s = 0;
  double exposed_pp_s = 0;
  double recompute_s = 0;
  // Under failures, for the points replayed (none: not replayed, or the replay
  // refused the layout, then `replay_error` says why).
  std::optional<PointReliability> reliability;
  std::string replay_error;
};

// The scenario of a point; throws what the scenario reader throws for a layout it rejects.
config::Scenario scenario_of(const config::SweepSpec& spec, const Point& p);

// Times a point's scenario by one full simulation: sets status (kEvaluated), the
// iteration time, rates, breakdown, memory peak and exposed communication of `r`.
// Throws std::invalid_argument for a layout the simulator cannot build.
void time_point(const config::Scenario& s, PointResult& r);
// The same with the scenario's memory estimate, which the caller has made already.
void time_point_with_estimate(const config::Scenario& s, const workload::MemoryEstimate& memory, PointResult& r);

// Tokens/s, model FLOPs, TFLOP/s per GPU, MFU, time to train, cost and energy from `m`.
void set_rates(const report::Metrics& m, PointResult& r);

// Never throws for a point the library rejects: that is a kRejected result.
// With the spec's extrapolate_microbatches a point with many micro-batches is
// timed from three short runs (sweep/microbatch_extrapolation.h).
PointResult evaluate_point(const config::SweepSpec& spec, const Point& p);

// Every point, on `threads` threads; results in the order of `points`.
// `progress(done)` is called from the calling thread about ten times a second
// and once at the end.
std::vector<PointResult> evaluate_points(const config::SweepSpec& spec, std::span<const Point> points, int threads,
                                         const std::function<void(std::size_t)>& progress = {});

// The points whose indices `todo` lists, on `threads` threads, into results[i]
// (results has one slot per point). `finished(i)`, when given, runs on the
// thread that evaluated point i, right after results[i] is set (the caller
// serializes what it does). Once `stop()` returns true no further point starts;
// the ones running end (a sweep interrupted: docs/sweep.md, "Resuming").
// `progress(done)` as for evaluate_points, counting the listed points.
void evaluate_listed(const config::SweepSpec& spec, std::span<const Point> points, std::span<const std::size_t> todo,
                     int threads, std::span<PointResult> results, const std::function<void(std::size_t)>& finished,
                     const std::function<void(std::size_t)>& progress = {}, const std::function<bool()>& stop = {});

std::string_view to_string(Status s);

}  // namespace trainsim::sweep
