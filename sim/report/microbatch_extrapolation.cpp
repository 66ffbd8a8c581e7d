#include "report/microbatch_extrapolation.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include "workload/iteration_builder.h"
#include "workload/memory.h"
#include "workload/pipeline_schedule.h"

namespace trainsim::report {

std::optional<std::array<long long, 3>> extrapolation_counts(const config::Scenario& s) {
  const workload::ParallelConfig& p = s.parallel;
  if (p.mode != workload::TrainingMode::kSync) return std::nullopt;
  const long long replicas_batch = s.training.micro_batch_size * p.data;
  if (replicas_batch <= 0 || (!p.replica_microbatches && s.training.global_batch_size % replicas_batch != 0))
    return std::nullopt;
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

std::optional<std::vector<long long>> extrapolate_totals(const config::Scenario& s,
                                                         const std::array<long long, 3>& counts,
                                                         const TotalsAt& run) {
  const long long m = workload::microbatches_per_replica(s.training, s.parallel);
  const long long step = counts[1] - counts[0];
  const auto linear = [](const std::vector<long long>& a, const std::vector<long long>& b,
                         const std::vector<long long>& c) {
    if (a.size() != b.size() || b.size() != c.size()) return false;
    for (std::size_t j = 0; j < a.size(); ++j)
      if (c[j] - b[j] != b[j] - a[j]) return false;
    return true;
  };
  // runs[i]: the run with counts[0] + i x step micro-batches.
  std::array<std::vector<long long>, 4> runs;
  for (std::size_t i = 0; i < 3; ++i) {
    std::optional<std::vector<long long>> r = run(counts[i]);
    if (!r) return std::nullopt;
    runs[i] = std::move(*r);
  }
  std::size_t c = 2;  // the last run of the three on a line
  if (!linear(runs[0], runs[1], runs[2])) {
    // A warm-up transient one step longer: one more run, m_d = m_c + pp, and
    // the same check on the last three. m >= 2 m_c >= m_d, so the line still
    // ends at or below m.
    std::optional<std::vector<long long>> r = run(counts[2] + step);
    if (!r) return std::nullopt;
    runs[3] = std::move(*r);
    c = 3;
    if (!linear(runs[1], runs[2], runs[3])) return std::nullopt;
  }
  const long long further = (m - (counts[0] + static_cast<long long>(c) * step)) / step;  // exact: same class mod step
  std::vector<long long> at_m(runs[c].size());
  for (std::size_t j = 0; j < at_m.size(); ++j) {
    at_m[j] = runs[c][j] + further * (runs[c][j] - runs[c - 1][j]);
    if (at_m[j] < 0) return std::nullopt;
  }
  return at_m;
}

namespace {

// Link bytes are extrapolated as whole numbers; a sum of bytes below 2^53 that
// is one is exact in any order of addition.
constexpr double kExactBelow = 9007199254740992.0;  // 2^53

// Calls f on each whole-number total of `t`, always in the same order: the one
// list both directions below walk.
template <class Totals, class F>
void for_each_count(Totals& t, F f) {
  auto& r = t.rank_time;
  for (auto* x : {&t.makespan, &t.busy.total, &r.compute, &r.recompute, &r.optimizer, &r.exposed, &r.exposed_tp,
                  &r.exposed_dp, &r.exposed_other, &r.idle})
    f(*x);
  for (auto* x : {&t.kernels, &t.measured, &t.fallback, &t.stand_in, &t.collectives_measured, &t.collectives_modeled})
    f(*x);
  f(t.flows);
  f(t.solves);
}

// RunTotals as a list of whole numbers (none when a link's bytes are not one),
// and back.
std::optional<std::vector<long long>> whole_numbers(const RunTotals& t) {
  std::vector<long long> v;
  for_each_count(t, [&](const auto& x) { v.push_back(static_cast<long long>(x)); });
  for (const double bytes : t.link_bytes) {
    if (!(bytes >= 0.0 && bytes < kExactBelow) || std::floor(bytes) != bytes) return std::nullopt;
    v.push_back(static_cast<long long>(bytes));
  }
  return v;
}

RunTotals from_whole_numbers(const std::vector<long long>& v, int busy_ranks) {
  RunTotals t;
  std::size_t i = 0;
  for_each_count(t, [&](auto& x) { x = static_cast<std::remove_reference_t<decltype(x)>>(v[i++]); });
  t.busy.ranks = busy_ranks;
  for (; i < v.size(); ++i) t.link_bytes.push_back(static_cast<double>(v[i]));
  return t;
}

// What does not grow with the micro-batches, and must be the same in every
// short run for their output to stand for the scenario's.
struct Constants {
  int busy_ranks = 0;
  int gradient_buckets = 0;
  int memory_rank = 0;  // the memory timeline's rank, peak and where it is
  double memory_peak_bytes = 0.0;
  core::Time memory_peak_time = 0;
  std::string memory_peak_task;
  std::vector<std::string> links;  // the links that carried traffic
  std::optional<std::vector<std::string>> fallback_reasons;  // with a calibration profile

  bool operator==(const Constants&) const = default;
};

Constants constants_of(const exec::SimulationOutput& out, const RunTotals& totals) {
  Constants c;
  c.busy_ranks = totals.busy.ranks;
  c.gradient_buckets = out.iteration.gradient_buckets;
  c.memory_rank = out.memory_over_time.rank;
  c.memory_peak_bytes = out.memory_over_time.peak_bytes;
  c.memory_peak_time = out.memory_over_time.peak_time;
  c.memory_peak_task = out.memory_over_time.peak_task;
  for (const exec::LinkUsage& l : out.network.links) c.links.push_back(l.name);
  if (out.calibration) c.fallback_reasons = out.calibration->fallback_reasons;
  return c;
}

}  // namespace

std::optional<Metrics> extrapolated_metrics(const config::Scenario& s, const exec::SimulateOptions& options) {
  const std::optional<std::array<long long, 3>> counts = extrapolation_counts(s);
  if (!counts) return std::nullopt;
  const long long m = workload::microbatches_per_replica(s.training, s.parallel);
  const long long step = (*counts)[1] - (*counts)[0];
  // At most half of the micro-batches in the three short runs, so that even
  // with a fourth (m_c + pp < m_a + m_b + m_c) they simulate fewer than m.
  if (2 * ((*counts)[0] + (*counts)[1] + (*counts)[2]) > m) return std::nullopt;
  const double planned = static_cast<double>((*counts)[0] + (*counts)[1] + (*counts)[2] + (*counts)[2] + step);
  double done = 0.0;  // micro-batches of the short runs simulated so far

  std::optional<Constants> first;             // the first run's, which the others must have
  std::optional<exec::SimulationOutput> last;  // the latest run, whose output the result is made from
  const TotalsAt run = [&](long long count) -> std::optional<std::vector<long long>> {
    config::Scenario shorter = s;
    workload::set_microbatches_per_replica(shorter.training, shorter.parallel, count);
    exec::SimulateOptions o = options;
    o.memory.reset();  // the short run's own estimate
    if (options.progress) {
      const double before = done;
      o.progress = [&, before, count](double f) {
        options.progress((before + f * static_cast<double>(count)) / planned);
      };
    }
    last.reset();  // one graph in memory at a time
    last = exec::simulate(shorter, o);
    done += static_cast<double>(count);
    const RunTotals totals = run_totals(*last);
    const Constants constants = constants_of(*last, totals);
    if (!first) first = constants;
    if (constants != *first) return std::nullopt;
    return whole_numbers(totals);
  };
  std::optional<std::vector<long long>> at_m;
  try {
    at_m = extrapolate_totals(s, *counts, run);
  } catch (const std::invalid_argument&) {
    return std::nullopt;  // the full simulation says why
  }
  if (!at_m) return std::nullopt;
  // The latest short run's output with the scenario's own work and estimate.
  const workload::IterationWork work = workload::iteration_work(s.model, s.training, s.parallel);
  last->iteration.num_microbatches = m;
  last->iteration.tokens_per_iteration = work.tokens;
  last->iteration.model_flops_per_iteration = work.model_flops;
  workload::MemoryEstimate memory =
      options.memory ? *options.memory : workload::estimate_memory(s.model, s.training, s.parallel);
  // The memory timeline follows the stage of the estimate's peak.
  if (memory.stage != last->memory.stage) return std::nullopt;
  last->memory = std::move(memory);
  const Metrics metrics = compute_metrics(s, *last, from_whole_numbers(*at_m, first->busy_ranks));
  if (options.progress) options.progress(1.0);
  return metrics;
}

}  // namespace trainsim::report
