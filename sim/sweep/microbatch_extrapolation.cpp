#include "sweep/microbatch_extrapolation.h"

#include <stdexcept>
#include <vector>

#include "core/time.h"
#include "execution/utilization.h"
#include "report/metrics.h"
#include "workload/iteration_builder.h"
#include "workload/memory.h"

namespace trainsim::sweep {

namespace {

constexpr std::size_t kTimes = 11;

// The time-like keys: per-iteration seconds of whole nanoseconds of the timeline
// (compute_busy_s: summed over the simulated ranks).
std::array<double*, kTimes> times_of(PointResult& r) {
  return {&r.iteration_time_s, &r.breakdown_s.compute, &r.breakdown_s.exposed_communication,
          &r.breakdown_s.pipeline_bubble, &r.breakdown_s.optimizer, &r.breakdown_s.other,
          &r.exposed_tp_s, &r.exposed_dp_s, &r.exposed_pp_s, &r.recompute_s, &r.compute_busy_s};
}

// The nanoseconds behind a per-iteration time (to_seconds(t) / iterations, as
// report::compute_metrics() and the attribution compute it); none when the
// value is not exactly that of a whole number of nanoseconds.
std::optional<core::Time> nanoseconds(double per_iteration_s, int iterations) {
  const double total = per_iteration_s * iterations;
  if (!(total >= 0.0)) return std::nullopt;  // from_seconds() refuses it
  const core::Time t = core::from_seconds(total);
  if (core::to_seconds(t) / iterations != per_iteration_s) return std::nullopt;
  return t;
}

}  // namespace

bool extrapolate_microbatches(const config::Scenario& s, const PointTimer& time, PointResult& r,
                              const workload::MemoryEstimate* memory) {
  const std::optional<std::array<long long, 3>> counts = extrapolation_counts(s);
  if (!counts) return false;
  const int iterations = s.simulation.iterations;
  // The nanoseconds of every time-like key of the run with `count` micro-batches
  // (and the same simulated ranks computing in every run).
  int compute_ranks = -1;
  const report::TotalsAt run = [&](long long count) -> std::optional<std::vector<long long>> {
    config::Scenario shorter = s;
    workload::set_microbatches_per_replica(shorter.training, shorter.parallel, count);
    PointResult pr;
    time(shorter, pr);
    if (pr.status != Status::kEvaluated) return std::nullopt;
    if (compute_ranks < 0) compute_ranks = pr.compute_ranks;
    if (pr.compute_ranks != compute_ranks) return std::nullopt;
    std::vector<long long> out;
    for (double* t : times_of(pr)) {
      const std::optional<core::Time> ns = nanoseconds(*t, iterations);
      if (!ns) return std::nullopt;
      out.push_back(*ns);
    }
    return out;
  };
  std::optional<std::vector<long long>> at_m;
  try {
    at_m = report::extrapolate_totals(s, *counts, run);
  } catch (const std::invalid_argument&) {
    return false;  // the full simulation says why
  }
  if (!at_m) return false;
  std::array<double, kTimes> extrapolated{};
  for (std::size_t j = 0; j < kTimes; ++j) extrapolated[j] = core::to_seconds((*at_m)[j]) / iterations;
  r.status = Status::kEvaluated;
  const std::array<double*, kTimes> into = times_of(r);
  for (std::size_t j = 0; j < kTimes; ++j) *into[j] = extrapolated[j];
  r.compute_ranks = compute_ranks;
  const workload::IterationWork work = workload::iteration_work(s.model, s.training, s.parallel);
  const double u = exec::gpu_utilization(r.compute_busy_s, r.compute_ranks, r.iteration_time_s);
  set_rates(report::rates(s, r.iteration_time_s, static_cast<double>(work.tokens), work.model_flops, u), r);
  r.peak_bytes_per_gpu =
      (memory ? *memory : workload::estimate_memory(s.model, s.training, s.parallel)).total();
  return true;
}

}  // namespace trainsim::sweep
