#include "report/metrics.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <utility>
#include <vector>

#include "execution/rank_time.h"
#include "execution/utilization.h"
#include "hardware/calibration_profile.h"
#include "hardware/power.h"
#include "report/prediction_interval.h"
#include "report/step_interval.h"
#include "scenario/model_error_reader.h"
#include "workload/parameters.h"

namespace trainsim::report {

namespace {

Breakdown breakdown_of(const exec::SimulationOutput& out, const exec::RankTime& t) {
  const double iters = out.iteration.iterations;
  Breakdown b;
  b.compute = core::to_seconds(t.compute) / iters;
  b.optimizer = core::to_seconds(t.optimizer) / iters;
  b.exposed_communication = core::to_seconds(t.exposed) / iters;
  // Time with both streams idle. With a pipeline it is the bubble: the stage
  // waits for its neighbours (docs/model.md, "Pipeline schedules").
  (out.iteration.simulated_ranks.size() > 1 ? b.pipeline_bubble : b.other) = core::to_seconds(t.idle) / iters;
  return b;
}

std::string bytes_text(double b) { return fmt::format("{:.1f} GiB", b / (1024.0 * 1024.0 * 1024.0)); }

}  // namespace

Metrics rates(const config::Scenario& s, double iteration_time_s, double tokens_per_iteration,
              double model_flops_per_iteration, double gpu_utilization) {
  Metrics m;
  m.num_gpus = s.cluster.num_gpus();
  m.iteration_time_s = iteration_time_s;
  m.tokens_per_iteration = tokens_per_iteration;
  m.tokens_per_s = m.tokens_per_iteration / m.iteration_time_s;
  m.model_flops_per_iteration = model_flops_per_iteration;
  m.peak_flops_per_gpu = s.cluster.mean_peak(s.training.precision);
  const double n = static_cast<double>(m.num_gpus);
  m.tflops_per_gpu = m.model_flops_per_iteration / (m.iteration_time_s * n) / 1e12;
  m.mfu = m.model_flops_per_iteration / (m.iteration_time_s * n * m.peak_flops_per_gpu);
  m.gpu_utilization = gpu_utilization;
  m.train_tokens = s.training.train_tokens;
  // A graph that does not say its tokens (a foreign Chakra trace) has no time to train.
  if (m.train_tokens && m.tokens_per_iteration > 0.0) {
    // Whole iterations: the last one runs in full even if it overshoots.
    m.iterations_to_train = std::ceil(*m.train_tokens / m.tokens_per_iteration);
    m.time_to_train_s = *m.iterations_to_train * m.iteration_time_s;
    if (s.cluster.price_per_gpu_hour) m.cost_usd = *m.time_to_train_s / 3600.0 * n * *s.cluster.price_per_gpu_hour;
    // Training all the time (docs/model.md, "Energy"); the replay under failures
    // adds the stops with the same power model.
    if (s.cluster.gpu.tdp_watts > 0.0)
      m.energy_kwh = hw::energy_kwh(hw::power_draw(s.cluster, gpu_utilization), s.cluster.pue, *m.time_to_train_s,
                                    *m.time_to_train_s);
    if (m.energy_kwh && *m.time_to_train_s > 0.0) m.average_power_w = *m.energy_kwh * 3.6e6 / *m.time_to_train_s;
  }
  return m;
}

namespace {

// The asynchronous modes' own figures (docs/results.md, "async"); none in synchronous training.
std::optional<AsyncSummary> async_summary(const config::Scenario& s, const exec::SimulationOutput& out) {
  if (const auto& ps = out.async.async_ps) {
    AsyncSummary a;
    a.mode = "async_ps";
    a.workers = ps->inputs.workers;
    a.servers = s.parallel.num_servers;
    a.staleness_bound = ps->inputs.staleness_bound;
    a.worker_step_time_s = ps->report.step_time_s;
    a.updates_per_s = ps->report.updates_per_s;
    a.server_utilization = ps->report.server_utilization;
    a.mean_staleness = ps->report.mean_staleness;
    a.max_staleness = ps->report.max_staleness;
    a.staleness.assign(ps->report.staleness.begin(), ps->report.staleness.end());
    a.bytes_pushed_per_server = ps->bytes_per_server_push;
    a.bytes_pulled_per_server = ps->bytes_per_server_pull;
    return a;
  }
  if (const auto& local = out.async.local_sgd) {
    AsyncSummary a;
    a.mode = "local_sgd";
    a.sync_period = local->sync_period;
    a.plain_step_s = core::to_seconds(local->plain_step);
    a.averaged_step_s = core::to_seconds(local->averaged_step);
    return a;
  }
  return std::nullopt;
}

// The estimate, the timeline's peak, and whether it fits (with the reason when not).
MemoryReport memory_report(const config::Scenario& s, const exec::SimulationOutput& out) {
  MemoryReport mem;
  mem.weights = out.memory.weights;
  mem.gradients = out.memory.gradients;
  mem.optimizer_states = out.memory.optimizer_states;
  mem.activations = out.memory.activations;
  mem.weight_casts = out.memory.weight_casts;
  mem.quantized_weight_cache = out.memory.quantized_weight_cache;
  mem.workspaces = out.memory.workspaces;
  mem.stage = out.memory.stage;
  mem.in_flight_microbatches = out.memory.in_flight_microbatches;
  mem.timeline_peak_bytes = out.memory_over_time.peak_bytes;
  mem.peak_time_s = core::to_seconds(out.memory_over_time.peak_time);
  mem.peak_task = out.memory_over_time.peak_task;
  mem.peak_bytes_per_gpu = out.memory.total();
  mem.capacity_bytes_per_gpu = s.cluster.smallest_memory_gpu().memory_capacity_bytes;
  if (s.calibration) mem.context_bytes = s.calibration->profile->device.context_bytes;
  mem.fits = mem.peak_bytes_per_gpu + mem.context_bytes <= mem.capacity_bytes_per_gpu;
  mem.host_bytes_per_gpu = out.memory.host_bytes;
  mem.host_capacity_bytes_per_gpu = s.cluster.host.memory_per_gpu;
  mem.gpus_per_node = s.cluster.gpus_per_node;
  mem.host_fits = mem.host_capacity_bytes_per_gpu <= 0.0 || mem.host_bytes_per_gpu <= mem.host_capacity_bytes_per_gpu;
  if (mem.fits && !mem.host_fits) {
    mem.fits = false;
    mem.reason = fmt::format(
        "CPU offload keeps {} per GPU in host memory ({} per node of {} GPUs) but the host has {} per GPU ({} per "
        "node): offload less (cpu_offloading_num_layers, optimizer_offload_fraction)",
        bytes_text(mem.host_bytes_per_gpu), bytes_text(mem.host_bytes_per_gpu * mem.gpus_per_node), mem.gpus_per_node,
        bytes_text(mem.host_capacity_bytes_per_gpu), bytes_text(mem.host_capacity_bytes_per_gpu * mem.gpus_per_node));
    return mem;
  }
  if (!mem.fits) {
    const double states = mem.weights + mem.gradients + mem.optimizer_states;
    mem.reason = fmt::format(
        "needs {}{} per GPU (pipeline stage {}, {:.2f} micro-batches in flight; on the timeline {} at {:.6f} s, at {}) but {} has {}: weights {}, gradients {}, optimizer states {}, activations {}{}",
        bytes_text(mem.peak_bytes_per_gpu),
        mem.context_bytes > 0.0 ? " + " + bytes_text(mem.context_bytes) + " of CUDA context (measured)" : "", mem.stage, mem.in_flight_microbatches, bytes_text(mem.timeline_peak_bytes),
        mem.peak_time_s, mem.peak_task.empty() ? "the start" : mem.peak_task, s.cluster.smallest_memory_gpu().name,
        bytes_text(mem.capacity_bytes_per_gpu),
        bytes_text(mem.weights), bytes_text(mem.gradients), bytes_text(mem.optimizer_states),
        bytes_text(mem.activations),
        states > mem.capacity_bytes_per_gpu
            ? "; the model states alone exceed the GPU: shard them (ZeRO, tensor or pipeline parallelism)"
            : "");
  }
  return mem;
}

// What the flow model saw, the busiest links first.
NetworkSummary network_summary(const exec::SimulationOutput& out, const RunTotals& totals) {
  NetworkSummary n;
  n.topology = out.network.topology;
  n.flows = totals.flows;
  n.solves = totals.solves;
  n.links_used = out.network.links.size();
  const double simulated_s = core::to_seconds(totals.makespan);
  for (std::size_t i = 0; i < out.network.links.size(); ++i) {
    const exec::LinkUsage& l = out.network.links[i];
    const double bytes = totals.link_bytes[i];
    n.busiest.push_back({l.name, bytes, l.capacity, simulated_s > 0.0 ? bytes / (l.capacity * simulated_s) : 0.0});
  }
  std::stable_sort(n.busiest.begin(), n.busiest.end(),
                   [](const LinkSummary& a, const LinkSummary& b) { return a.mean_utilization > b.mean_utilization; });
  if (n.busiest.size() > NetworkSummary::kBusiestLinks) n.busiest.resize(NetworkSummary::kBusiestLinks);
  return n;
}

// The calibration profile behind the compute costs; none without one.
std::optional<CalibrationReport> calibration_report(const config::Scenario& s, const exec::SimulationOutput& out,
                                                   const RunTotals& totals) {
  if (!s.calibration || !out.calibration) return std::nullopt;
  CalibrationReport c;
  c.profile = s.calibration->file;
  c.device = s.calibration->profile->device.name;
  c.date = s.calibration->profile->date;
  c.complete = s.calibration->profile->complete;
  c.measured = totals.measured;
  c.fallback = totals.fallback;
  c.stand_in = totals.stand_in;
  c.fallback_reasons = out.calibration->fallback_reasons;
  c.collectives_measured = totals.collectives_measured;
  c.collectives_modeled = totals.collectives_modeled;
  const hw::FallbackEfficiency& e = out.calibration->fallback_efficiency;
  c.fallback_memory_bandwidth = e.memory_bandwidth;
  c.fallback_matmul_points = e.matmul_points;
  c.launch_overhead_s = e.launch_overhead_s;
  if (s.training.framework == workload::Framework::kPytorchEager) c.host_dispatch = s.calibration->profile->host_dispatch;
  for (const hw::CollectiveRow& row : s.calibration->profile->collectives)
    if (row.scope == hw::CollectiveScope::kInterNode && row.nodes == 0) ++c.collective_rows_without_nodes;
  return c;
}

// Compute kernels the first simulated rank runs over the simulated iterations
// (K of report/step_interval.h, per iteration).
long long compute_kernels(const exec::SimulationOutput& out) {
  const int rank = out.iteration.simulated_ranks.front();
  long long kernels = 0;
  const workload::TaskGraph& graph = out.iteration.graph;
  for (const workload::Task& t : graph.tasks())
    if (t.rank == rank && t.stream == workload::Stream::kCompute && !graph.work(t).collective) ++kernels;
  return kernels;
}

}  // namespace

RunTotals run_totals(const exec::SimulationOutput& out) {
  RunTotals t;
  t.makespan = out.timeline.makespan;
  t.busy = exec::compute_busy(out);
  t.rank_time = exec::rank_time(out, out.iteration.simulated_ranks.front());
  t.kernels = compute_kernels(out);
  t.flows = out.network.flows;
  t.solves = out.network.solves;
  for (const exec::LinkUsage& l : out.network.links) t.link_bytes.push_back(l.bytes);
  if (const auto& c = out.calibration) {
    t.measured = c->measured;
    t.fallback = c->fallback;
    t.stand_in = c->stand_in;
    t.collectives_measured = c->collectives_measured;
    t.collectives_modeled = c->collectives_modeled;
  }
  return t;
}

Metrics compute_metrics(const config::Scenario& s, const exec::SimulationOutput& out) {
  return compute_metrics(s, out, run_totals(out));
}

Metrics compute_metrics(const config::Scenario& s, const exec::SimulationOutput& out, const RunTotals& totals) {
  double iteration_time_s = core::to_seconds(totals.makespan) / out.iteration.iterations;
  // Asynchronous modes: the mean over the replayed steps (docs/model.md, "Asynchronous training").
  if (const auto async = out.async.iteration_time_s(s.parallel.data)) iteration_time_s = *async;
  const exec::ComputeBusy& busy = totals.busy;
  const double busy_per_iteration_s = core::to_seconds(busy.total) / out.iteration.iterations;
  Metrics m = rates(s, iteration_time_s, static_cast<double>(out.iteration.tokens_per_iteration),
                    out.iteration.model_flops_per_iteration,
                    exec::gpu_utilization(busy_per_iteration_s, busy.ranks, iteration_time_s));
  m.compute_busy_s = busy_per_iteration_s;
  m.compute_ranks = busy.ranks;
  m.scenario = s.name;
  m.iterations_simulated = out.iteration.iterations;
  m.measured_rank_time = totals.rank_time;
  m.breakdown_s = breakdown_of(out, m.measured_rank_time);
  if (out.async.async_ps || out.async.local_sgd) {
    // The timeline is one worker's step; the mean step comes from the replay (or
    // the averaging period): the rest of it is waiting on communication.
    Breakdown& b = m.breakdown_s;
    b.exposed_communication = std::max(0.0, m.iteration_time_s - b.compute - b.optimizer - b.pipeline_bubble);
    b.other = 0.0;
  }
  m.num_microbatches = out.iteration.num_microbatches;
  if (s.cluster.heterogeneous()) m.mixed = MixedSummary{out.iteration.layers_per_virtual_stage, out.stage_pools};
  m.gradient_buckets = out.iteration.gradient_buckets;
  m.parameters = workload::count_parameters(s.model).total;
  m.async = async_summary(s, out);
  m.memory = memory_report(s, out);
  m.compute_model = out.compute_model;
  m.network_model = out.network_model;
  m.network = network_summary(out, totals);
  m.calibration = calibration_report(s, out, totals);
  if (!out.async.async_ps && !out.async.local_sgd)
    m.iteration_time_interval =
        step_interval(m.iteration_time_s, m.breakdown_s,
                      static_cast<double>(totals.kernels) / out.iteration.iterations, m.num_gpus,
                      s.cluster.gpu_speed_spread, s.cluster.gpu.kernel_time_cv);
  if (!out.async.async_ps && !out.async.local_sgd)
    m.prediction_interval = prediction_interval(m.iteration_time_s, scenario::shipped_model_error());
  return m;
}

void add_reliability(Metrics& m, exec::FullRunReport full_run) {
  const faults::MonteCarloResult& mc = full_run.monte_carlo;
  m.time_to_train_s = mc.time_to_train_s.mean;
  m.iterations_to_train = static_cast<double>(full_run.iterations);
  m.cost_usd = m.cost_usd ? std::optional<double>(mc.cost_usd) : std::nullopt;
  m.energy_kwh = mc.energy_kwh;
  // Mean energy over mean wall time: the draw a power budget must cover on average.
  m.average_power_w = mc.time_to_train_s.mean > 0.0
                          ? std::optional<double>(mc.energy_kwh * 3.6e6 / mc.time_to_train_s.mean)
                          : std::nullopt;
  m.reliability = std::move(full_run);
}

}  // namespace trainsim::report
