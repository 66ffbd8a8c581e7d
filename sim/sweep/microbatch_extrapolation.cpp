#include "sweep/microbatch_extrapolation.h"

#include <algorithm>
#include <stdexcept>

#include "core/time.h"
#include "execution/utilization.h"
#include "report/metrics.h"
#include "workload/iteration_builder.h"
#include "workload/memory.h"
#include "workload/pipeline_schedule.h"

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

std::optional<std::array<long long, 3>> extrapolation_counts(const config::Scenario& s) {
  const workload::ParallelConfig& p = s.parallel;
  if (p.mode != workload::TrainingMode::kSync) return std::nullopt;
  const long long replicas_batch = s.training.micro_batch_size * p.data;
  if (replicas_batch <= 0 || s.training.global_batch_size % replicas_batch != 0) return std::nullopt;
  const long long m = workload::microbatches_per_replica(s.training, p);
  long long chunks = 1;
  try {
    chunks = workload::model_chunks(s.model.num_layers, p);
  } catch (const std::invalid_argument&) {
    return std::nullopt;  // the full simulation says why
  }
  // The steady state repeats every pp micro-batches or a divisor of it (stages
  // wait on each other around the pipeline), not always every one.
  const long long step = p.pipeline;
  const long long least = std::max<long long>(2, p.pipeline * chunks);
  // The least count >= least in m's class modulo step.
  const long long a = least + (((m - least) % step) + step) % step;
  const std::array<long long, 3> counts{a, a + step, a + 2 * step};
  if (m < 2 * counts[2]) return std::nullopt;
  return counts;
}

bool extrapolate_microbatches(const config::Scenario& s, const PointTimer& time, PointResult& r,
                              const workload::MemoryEstimate* memory) {
  const std::optional<std::array<long long, 3>> counts = extrapolation_counts(s);
  if (!counts) return false;
  const long long replicas_batch = s.training.micro_batch_size * s.parallel.data;
  const long long m = workload::microbatches_per_replica(s.training, s.parallel);
  const long long step = (*counts)[1] - (*counts)[0];
  const int iterations = s.simulation.iterations;
  // The nanoseconds of every time-like key of the run with `count` micro-batches
  // (and the same simulated ranks computing in every run).
  int compute_ranks = -1;
  const auto run = [&](long long count, std::array<core::Time, kTimes>& out) {
    config::Scenario shorter = s;
    shorter.training.global_batch_size = count * replicas_batch;
    PointResult pr;
    time(shorter, pr);
    if (pr.status != Status::kEvaluated) return false;
    if (compute_ranks < 0) compute_ranks = pr.compute_ranks;
    if (pr.compute_ranks != compute_ranks) return false;
    const std::array<double*, kTimes> t = times_of(pr);
    for (std::size_t j = 0; j < kTimes; ++j) {
      const std::optional<core::Time> ns = nanoseconds(*t[j], iterations);
      if (!ns) return false;
      out[j] = *ns;
    }
    return true;
  };
  const auto linear = [](const std::array<core::Time, kTimes>& a, const std::array<core::Time, kTimes>& b,
                         const std::array<core::Time, kTimes>& c) {
    for (std::size_t j = 0; j < kTimes; ++j)
      if (c[j] - b[j] != b[j] - a[j]) return false;
    return true;
  };
  // runs[i]: the run with counts[0] + i x step micro-batches.
  std::array<std::array<core::Time, kTimes>, 4> runs{};
  std::size_t c = 2;  // the last run of the three on a line
  try {
    for (std::size_t i = 0; i < 3; ++i)
      if (!run((*counts)[i], runs[i])) return false;
    if (!linear(runs[0], runs[1], runs[2])) {
      // A warm-up transient one step longer (with m_a = pp, 1F1B never reaches
      // its steady state; the flow model's rates can differ over the first
      // step): one more run, m_d = m_c + pp, and the same check on the last
      // three. m >= 2 m_c >= m_d, so the line still ends at or below m.
      c = 3;
      if (!run((*counts)[2] + step, runs[3]) || !linear(runs[1], runs[2], runs[3])) return false;
    }
  } catch (const std::invalid_argument&) {
    return false;  // the full simulation says why
  }
  const long long further = (m - ((*counts)[0] + static_cast<long long>(c) * step)) / step;  // exact: same class mod step
  std::array<double, kTimes> extrapolated{};
  for (std::size_t j = 0; j < kTimes; ++j) {
    const core::Time t = runs[c][j] + further * (runs[c][j] - runs[c - 1][j]);
    if (t < 0) return false;
    extrapolated[j] = core::to_seconds(t) / iterations;
  }
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
