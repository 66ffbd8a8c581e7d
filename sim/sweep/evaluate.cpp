#include "sweep/evaluate.h"

#include <algorithm>
#include <stdexcept>
#include <utility>

#include "core/parallel.h"
#include "execution/simulate.h"
#include "scenario/errors.h"
#include "scenario/layout_checks.h"
#include "scenario/mixed_cluster.h"
#include "scenario/reader.h"
#include "sweep/microbatch_extrapolation.h"
#include "workload/memory.h"

namespace trainsim::sweep {

namespace {

// Communication of each stream exposed on the rank compute_metrics() measures,
// per iteration, and the recomputation time (exec::rank_time).
void attribute(const report::Metrics& m, double iterations, PointResult& r) {
  const exec::RankTime& t = m.measured_rank_time;
  r.exposed_tp_s = core::to_seconds(t.exposed_tp) / iterations;
  r.exposed_dp_s = core::to_seconds(t.exposed_dp) / iterations;
  r.exposed_pp_s = core::to_seconds(t.exposed_other) / iterations;
  r.recompute_s = core::to_seconds(t.recompute) / iterations;
}

void fill_layout(const config::Scenario& s, long long microbatches, PointResult& r) {
  r.data = s.parallel.data;
  r.num_microbatches = microbatches;
  r.zero_stage = s.parallel.zero_stage;
  r.sequence_parallel = s.parallel.sequence_parallel;
  r.recompute = config::kRecomputeNames[static_cast<int>(s.parallel.recompute)];
  r.schedule = config::kScheduleNames[static_cast<int>(s.parallel.schedule)];
  r.virtual_stage = s.parallel.layers_per_virtual_stage.value_or(0);
}

}  // namespace

std::string_view to_string(Status s) {
  switch (s) {
    case Status::kEvaluated: return "evaluated";
    case Status::kDoesNotFit: return "does_not_fit";
    case Status::kRejected: return "rejected";
  }
  return "rejected";
}

config::Scenario scenario_of(const config::SweepSpec& spec, const Point& p) {
  const config::ClusterOption& option = spec.clusters[static_cast<std::size_t>(p.cluster)];
  config::Scenario s = option.base;
  s.training.micro_batch_size = p.micro_batch;
  s.parallel = scenario::check_parallelism(parallel_config(p), p.schedule >= 0, s);
  scenario::resolve_mixed_cluster(s);
  s.simulation.network_model = p.network_model;
  s.name = option.name + ": " + layout_label(p);
  return s;
}

void set_rates(const report::Metrics& m, PointResult& r) {
  r.tokens_per_s = m.tokens_per_s;
  r.model_flops_per_iteration = m.model_flops_per_iteration;
  r.tflops_per_gpu = m.tflops_per_gpu;
  r.mfu = m.mfu;
  r.time_to_train_s = m.time_to_train_s;
  r.cost_usd = m.cost_usd;
  r.energy_kwh = m.energy_kwh;
}

void time_point(const config::Scenario& s, PointResult& r) {
  time_point_with_estimate(s, workload::estimate_memory(s.model, s.training, s.parallel), r);
}

void time_point_with_estimate(const config::Scenario& s, const workload::MemoryEstimate& memory, PointResult& r) {
  exec::SimulateOptions options;
  options.memory = memory;
  options.memory_timeline = false;  // the sweep reports the estimate (docs/sweep.md, "Pruning and evaluation")
  options.link_counters = false;    // and writes no trace
  const exec::SimulationOutput out = exec::simulate(s, options);
  const report::Metrics m = report::compute_metrics(s, out);
  r.status = Status::kEvaluated;
  r.iteration_time_s = m.iteration_time_s;
  set_rates(m, r);
  r.breakdown_s = m.breakdown_s;
  r.compute_busy_s = m.compute_busy_s;
  r.compute_ranks = m.compute_ranks;
  r.peak_bytes_per_gpu = m.memory.peak_bytes_per_gpu;
  attribute(m, out.iteration.iterations, r);
}

PointResult evaluate_point(const config::SweepSpec& spec, const Point& p) {
  PointResult r;
  r.id = p.id;
  config::Scenario s;
  try {
    s = scenario_of(spec, p);
  } catch (const scenario::NotSupportedYet& e) {
    r.reason = "not supported yet: " + e.json_path();
    r.message = e.what();
    return r;
  } catch (const scenario::ScenarioError& e) {
    r.reason = "rejected by the scenario reader at " + e.json_path();
    r.message = e.what();
    return r;
  }
  // Memory first: the estimate costs microseconds, the simulation milliseconds.
  const workload::MemoryEstimate memory = workload::estimate_memory(s.model, s.training, s.parallel);
  r.peak_bytes_per_gpu = memory.total();
  r.capacity_bytes_per_gpu = s.cluster.smallest_memory_gpu().memory_capacity_bytes;
  const long long microbatches = workload::microbatches_per_replica(s.training, s.parallel);
  fill_layout(s, microbatches, r);
  if (r.peak_bytes_per_gpu > r.capacity_bytes_per_gpu) {
    r.status = Status::kDoesNotFit;
    return r;
  }
  try {
    // The estimate above serves the point; the extrapolation's short runs are
    // scenarios of their own and estimate theirs.
    if (!spec.extrapolate_microbatches || !extrapolate_microbatches(s, time_point, r, &memory))
      time_point_with_estimate(s, memory, r);
  } catch (const std::invalid_argument& e) {
    // A layout the reader lets through but the simulator cannot build (e.g. a
    // group that does not tile the nodes).
    r = PointResult{};
    r.id = p.id;
    r.reason = "rejected by the simulator";
    r.message = e.what();
  }
  return r;
}

std::vector<PointResult> evaluate_points(const config::SweepSpec& spec, std::span<const Point> points, int threads,
                                         const std::function<void(std::size_t)>& progress) {
  std::vector<PointResult> results(points.size());
  core::parallel_for(
      points.size(), threads, [&](std::size_t i) { results[i] = evaluate_point(spec, points[i]); }, progress);
  return results;
}

void evaluate_listed(const config::SweepSpec& spec, std::span<const Point> points, std::span<const std::size_t> todo,
                     int threads, std::span<PointResult> results, const std::function<void(std::size_t)>& finished,
                     const std::function<void(std::size_t)>& progress, const std::function<bool()>& stop) {
  core::parallel_for(
      todo.size(), threads,
      [&](std::size_t k) {
        const std::size_t i = todo[k];
        results[i] = evaluate_point(spec, points[i]);
        if (finished) finished(i);
      },
      progress, stop);
}

}  // namespace trainsim::sweep
