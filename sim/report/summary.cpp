#include "report/summary.h"

#include <cmath>
#include <filesystem>
#include <optional>
#include <utility>
#include <fmt/format.h>

namespace trainsim::report {

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

std::string si(double v, std::string_view unit) {
  static constexpr std::pair<double, std::string_view> kScales[] = {
      {1e18, "E"}, {1e15, "P"}, {1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}};
  for (const auto& [scale, prefix] : kScales)
    if (v >= scale) return fmt::format("{:.3g} {}{}", v / scale, prefix, unit);
  return unit.empty() ? fmt::format("{:.3g}", v) : fmt::format("{:.3g} {}", v, unit);
}

// Token and parameter counts: 10B, 15T (as scenario files write them).
std::string count(double v) {
  static constexpr std::pair<double, std::string_view> kScales[] = {{1e12, "T"}, {1e9, "B"}, {1e6, "M"}, {1e3, "K"}};
  for (const auto& [scale, suffix] : kScales)
    if (v >= scale) return fmt::format("{:.3g}{}", v / scale, suffix);
  return fmt::format("{:.3g}", v);
}

std::string duration(double s) {
  if (s < 1e-3) return fmt::format("{:.1f} us", s * 1e6);
  if (s < 1.0) return fmt::format("{:.2f} ms", s * 1e3);
  if (s < 120.0) return fmt::format("{:.3f} s", s);
  if (s < 7200.0) return fmt::format("{:.1f} min", s / 60.0);
  if (s < 3 * 86400.0) return fmt::format("{:.1f} h", s / 3600.0);
  return fmt::format("{:.1f} days", s / 86400.0);
}

std::string share(double part, double whole) {
  return whole > 0 ? fmt::format("{} ({:.1f}%)", duration(part), 100.0 * part / whole) : duration(part);
}

// The energy with what it rests on (docs/model.md, "Energy").
std::string energy_text(double kwh, std::optional<double> watts, std::string_view mean, double utilization,
                        const hw::ClusterSpec& c) {
  if (c.heterogeneous()) {
    std::vector<std::string> pools;
    for (const hw::GpuPool& p : c.pools)
      pools.push_back(fmt::format("{} {:.0f}-{:.0f} W and {:.0f} W per node", p.gpu.name, p.gpu.idle_watts,
                                  p.gpu.tdp_watts, p.gpu.node_overhead_watts));
    return fmt::format("{}{} ({}GPUs at {:.0f}% utilization between idle and TDP: {}; PUE {:.2f})",
                       si(kwh * 1e3, "Wh"), watts ? ", " + si(*watts, "W") + " on average" : "", mean,
                       100.0 * utilization, fmt::join(pools, ", "), c.pue);
  }
  return fmt::format("{}{} ({}GPUs at {:.0f}% utilization between {:.0f} W idle and {:.0f} W TDP, {:.0f} W per node "
                     "besides them, PUE {:.2f})",
                     si(kwh * 1e3, "Wh"), watts ? ", " + si(*watts, "W") + " on average" : "", mean,
                     100.0 * utilization, c.gpu.idle_watts, c.gpu.tdp_watts, c.gpu.node_overhead_watts, c.pue);
}
// One "label   text" line of the summary.
class Lines {
 public:
  void operator()(std::string_view label, const std::string& text) { out_ += fmt::format("{:<18}{}\n", label, text); }
  void blank() { out_ += '\n'; }
  void raw(const std::string& text) { out_ += text; }
  [[nodiscard]] std::string take() { return std::move(out_); }

 private:
  std::string out_;
};

// A mixed cluster's pools, one line each, and the network they share.
void add_pools(Lines& line, const hw::ClusterSpec& c) {
  std::vector<std::string> kinds;
  for (int k = 0; k < c.num_pools(); ++k) kinds.push_back(fmt::format("{} x {}", c.pool_gpus(k), c.pool_gpu(k).name));
  line("cluster", fmt::format("{} ({} nodes x {}), {} NICs per node ({}): mixed, {} pools", fmt::join(kinds, " + "),
                              c.num_nodes, c.gpus_per_node, c.inter_node.nics_per_node, c.inter_node.topology,
                              c.num_pools()));
  int first = 0;
  for (int k = 0; k < c.num_pools(); ++k) {
    const hw::GpuPool& p = c.pools[static_cast<std::size_t>(k)];
    line(k == 0 ? "pools" : "",
         fmt::format("{}: nodes {}-{}, {} {}/s per GPU, {}bps NICs{}{}", p.gpu.name, first, first + p.num_nodes - 1,
                     p.intra_node.fabric, si(p.intra_node.bandwidth, "B"), si(p.nic_bandwidth * 8.0, ""),
                     p.price_per_gpu_hour ? fmt::format(", ${:.2f} per GPU-hour", *p.price_per_gpu_hour) : "",
                     p.gpu.efficiency_basis.empty() ? "" : "; efficiency: " + p.gpu.efficiency_basis));
    first += p.num_nodes;
  }
}

// A mixed cluster's pipeline: each stage's layers and the GPU that sets its pace.
void add_mixed_pipeline(Lines& line, const config::Scenario& s, const MixedSummary& mixed) {
  std::vector<std::string> stages;
  const std::size_t pp = mixed.stage_pools.size();
  for (std::size_t st = 0; st < pp; ++st) {
    long long layers = 0;
    for (std::size_t j = st; j < mixed.stage_layers.size(); j += pp) layers += mixed.stage_layers[j];
    stages.push_back(fmt::format("{} on {}", layers, s.cluster.pools[static_cast<std::size_t>(mixed.stage_pools[st])].gpu.name));
  }
  const bool balanced = s.parallel.balanced_by_speed;
  const bool shares = s.parallel.replica_microbatches.has_value();
  line("mixed pipeline",
       fmt::format("decoder layers per stage, paced by {}: {}{}", shares ? "the pacing replica's GPUs" : "its slowest GPU",
                   fmt::join(stages, ", "), balanced ? " (pipeline_balance \"speed\")" : ""));
  const long long total = s.training.global_batch_size / s.training.micro_batch_size;
  line("", shares ? fmt::format("batch_split \"proportional\": {} micro-batches shared by speed among {} replicas; the "
                                "pacing replica runs {} of them",
                                total, s.parallel.data, *s.parallel.replica_microbatches)
                  : std::string("batch_split \"even\": every replica runs the same micro-batches, the faster ones "
                                "wait at the gradient reduction"));
}

// The cluster, model, layout, cost models and asynchronous mode.
void add_setup(Lines& line, const config::Scenario& s, const Metrics& m) {
  const auto& c = s.cluster;
  const auto& p = s.parallel;
  const std::string domains =
      c.nodes_per_domain == 1 ? std::string()
                              : fmt::format(" in {} scale-up domain{} of {} GPUs", c.num_domains(),
                                            c.num_domains() == 1 ? "" : "s", c.gpus_per_domain());
  const std::string per_gpu = c.intra_node.fabric == "mesh"
                                  ? fmt::format("per link, {} links per GPU", c.gpus_per_node - 1)
                                  : std::string("per GPU");
  if (c.heterogeneous()) {
    add_pools(line, c);
  } else {
    line("cluster", fmt::format("{} x {} ({} node{} x {}{}), {} {}/s {}, {} x {}bps NICs per node ({})",
                                m.num_gpus, c.gpu.name, c.num_nodes, c.num_nodes == 1 ? "" : "s", c.gpus_per_node,
                                domains, c.intra_node.fabric, si(c.intra_node.bandwidth, "B"), per_gpu,
                                c.inter_node.nics_per_node, si(c.inter_node.nic_bandwidth * 8.0, ""),
                                c.inter_node.topology));
    if (!c.gpu.efficiency_basis.empty()) line("efficiency basis", c.gpu.efficiency_basis);
  }
  line("model", fmt::format("{}: {} parameters, {} layers, hidden {}, sequence {}", s.model.name,
                            count(m.parameters), s.model.num_layers, s.model.hidden_size, s.model.seq_length));
  line("layout", fmt::format("TP {} PP {} DP {} CP {}{} | micro-batch {} x {} micro-batches, global batch {} "
                             "({} tokens)",
                             p.tensor, p.pipeline, p.data, p.context,
                             p.expert > 1 ? fmt::format(" EP {}", p.expert) : "", s.training.micro_batch_size,
                             m.num_microbatches,
                             s.training.global_batch_size, count(m.tokens_per_iteration)));
  if (m.mixed) add_mixed_pipeline(line, s, *m.mixed);
  line("cost models", fmt::format("compute: {}; network: {}", m.compute_model, m.network_model));
  if (m.async && m.async->mode == "async_ps") {
    const AsyncSummary& a = *m.async;
    line("parameter servers",
         fmt::format("{} workers, {} servers, staleness bound {}: a worker steps every {}, {:.1f} updates/s, "
                     "servers {:.0f}% busy; staleness mean {:.2f}, max {}",
                     a.workers, a.servers, a.staleness_bound, duration(a.worker_step_time_s), a.updates_per_s,
                     100.0 * a.server_utilization, a.mean_staleness, a.max_staleness));
  } else if (m.async) {
    line("local SGD", fmt::format("parameters averaged every {} steps: a step takes {}, {} with the average",
                                  m.async->sync_period, duration(m.async->plain_step_s),
                                  duration(m.async->averaged_step_s)));
  }
}

// Where the kernel and collective costs came from (a calibration profile).
void add_calibration(Lines& line, const config::Scenario& s, const CalibrationReport& cal) {
  // "2026-11-22T14:03:11Z" -> "2026-11-22": the day is what tells profiles apart.
  const std::string day = cal.date.size() > 10 && cal.date[10] == 'T' ? cal.date.substr(0, 10) : cal.date;
  line("costs", fmt::format("{} kernels from profile {} ({}, {}{}), {} from the roofline fallback", cal.measured,
                            std::filesystem::path(cal.profile).filename().string(), cal.device, day,
                            cal.complete ? "" : ", incomplete", cal.fallback));
  if (cal.fallback > 0) {
    const std::string memory = cal.fallback_memory_bandwidth
                                   ? fmt::format("the profile's device-copy bandwidth ({:.0f} GB/s)", *cal.fallback_memory_bandwidth / 1e9)
                                   : std::string("the GPU spec's memory bandwidth");
    const std::string matmul =
        cal.fallback_matmul_points > 0
            ? fmt::format("its {} GEMM efficiency curve ({} points)", hw::to_string(s.training.precision),
                          cal.fallback_matmul_points)
            : std::string("the GPU spec's GEMM efficiency curve");
    line("", fmt::format("fallback at {} and {}", memory, matmul));
  }
  if (cal.stand_in > 0)
    line("", fmt::format("{} of PyTorch's kernels (sdpa_*, torch_*) at the measured rate of ours that does the same "
                         "work: the profile has no rows of theirs that cover them (scripts/pytorch-kernel-reference.py "
                         "measures them)",
                         cal.stand_in));
  if (cal.host_dispatch && s.training.cuda_graph)
    line("", fmt::format("the step replayed from one CUDA graph (enable_cuda_graph): no host dispatch, each kernel "
                         "{:.2f} us longer (profile's graph_kernel_s)",
                         cal.host_dispatch->graph_kernel_s * 1e6));
  else if (cal.host_dispatch)
    line("", fmt::format("kernels issued by {}'s host thread {:.2f} us apart forward, {:.2f} us backward, the "
                         "optimizer step in {:.1f} us (profile): the GPU waits where they run shorter",
                         cal.host_dispatch->framework.empty() ? std::string("the framework")
                                                              : cal.host_dispatch->framework,
                         cal.host_dispatch->forward_s * 1e6, cal.host_dispatch->backward_s * 1e6,
                         cal.host_dispatch->optimizer_s * 1e6));
  if (cal.launch_overhead_s)
    line("", fmt::format("no kernel shorter than the profile's launch overhead, {:.2f} us", *cal.launch_overhead_s * 1e6));
  if (cal.collectives_measured + cal.collectives_modeled > 0)
    line("", fmt::format("{} collectives at their measured times, {} from the network model{}",
                         cal.collectives_measured, cal.collectives_modeled,
                         cal.collective_rows_without_nodes > 0
                             ? fmt::format(" ({} inter_node profile rows without \"nodes\" price none)",
                                           cal.collective_rows_without_nodes)
                             : std::string()));
}

// Iteration time, throughput, FLOPs and the breakdown.
void add_performance(Lines& line, const config::Scenario& s, const Metrics& m) {
  line("iteration time", duration(m.iteration_time_s));
  if (const auto& i = m.iteration_time_interval)
    line("", fmt::format("P10 {} / P50 {} / P90 {}: the slowest of {} GPUs (speed spread {:.1f}%, kernel time CV "
                         "{:.1f}% over {} kernels a step)",
                         duration(i->p10), duration(i->p50), duration(i->p90), i->gpus, 100.0 * i->gpu_speed_spread,
                         100.0 * i->kernel_time_cv, count(i->kernels_per_step)));
  if (const auto& p = m.prediction_interval)
    line("", fmt::format("measured runs: P10 {} / P50 {} / P90 {} (trainsim's error on {} published runs, "
                         "docs/model.md \"Prediction interval\")",
                         duration(p->p10), duration(p->p50), duration(p->p90), p->cases));
  line("throughput", fmt::format("{} tokens/s ({} tokens/s per GPU)", count(m.tokens_per_s),
                                 count(m.tokens_per_s / static_cast<double>(m.num_gpus))));
  line("model FLOPs", fmt::format("{} per iteration, {:.1f} TFLOP/s per GPU, MFU {:.1f}% of {} {}",
                                  si(m.model_flops_per_iteration, "FLOP"), m.tflops_per_gpu, 100.0 * m.mfu,
                                  si(m.peak_flops_per_gpu, "FLOP/s"), hw::to_string(s.training.precision)));
  const Breakdown& b = m.breakdown_s;
  line("breakdown", fmt::format("compute {}, exposed communication {}, pipeline bubble {}, optimizer {}, other {}",
                                share(b.compute, m.iteration_time_s), share(b.exposed_communication, m.iteration_time_s),
                                share(b.pipeline_bubble, m.iteration_time_s), share(b.optimizer, m.iteration_time_s),
                                share(b.other, m.iteration_time_s)));
}

// Memory per GPU: the estimate, and the peak over the timeline.
void add_memory(Lines& line, const Metrics& m) {
  const MemoryReport& mem = m.memory;
  line("memory per GPU",
       fmt::format("{:.1f} GiB of {:.1f} GiB ({}): weights {:.1f}, gradients {:.1f}, optimizer {:.1f}, "
                   "activations {:.1f} GiB",
                   mem.peak_bytes_per_gpu / kGiB, mem.capacity_bytes_per_gpu / kGiB,
                   mem.fits ? "fits" : "DOES NOT FIT", mem.weights / kGiB, mem.gradients / kGiB,
                   mem.optimizer_states / kGiB, mem.activations / kGiB));
  if (mem.weight_casts > 0.0 || mem.workspaces > 0.0)
    line("", fmt::format("weights include {:.2f} GiB of autocast's bf16 weight casts, activations {:.2f} GiB of cuBLAS "
                         "workspaces (PyTorch eager; gradients are freed by zero_grad until their backward)",
                         mem.weight_casts / kGiB, mem.workspaces / kGiB));
  if (mem.quantized_weight_cache > 0.0)
    line("", fmt::format("weights include {:.2f} GiB of Transformer Engine's quantized weight copies and their "
                         "transposes, kept through the step (fp8_param_gather off)",
                         mem.quantized_weight_cache / kGiB));
  line("", fmt::format("over the timeline (stage {}, with communication buffers): peak {:.1f} GiB at {}, at {}",
                       mem.stage, mem.timeline_peak_bytes / kGiB, duration(mem.peak_time_s),
                       mem.peak_task.empty() ? "the start" : mem.peak_task));
  if (mem.context_bytes > 0.0)
    line("", fmt::format("and {:.2f} GiB of CUDA context, as the calibration profile measured it", mem.context_bytes / kGiB));
  if (mem.host_bytes_per_gpu > 0.0)
    line("host memory", fmt::format("{:.1f} GiB per GPU offloaded, {:.1f} GiB per node of {} GPUs ({})",
                                    mem.host_bytes_per_gpu / kGiB, mem.host_bytes_per_gpu * mem.gpus_per_node / kGiB,
                                    mem.gpus_per_node,
                                    mem.host_capacity_bytes_per_gpu <= 0.0
                                        ? std::string("the host's capacity is not known")
                                        : fmt::format("of {:.0f} GiB: {}", mem.host_capacity_bytes_per_gpu *
                                                                                mem.gpus_per_node / kGiB,
                                                      mem.host_fits ? "fits" : "DOES NOT FIT")));
  if (!mem.fits) line("", mem.reason);
}

// Time to train, goodput, checkpoints, cost and energy under failures.
void add_full_run(Lines& line, const config::Scenario& s, const Metrics& m, const exec::FullRunReport& r) {
  const auto& c = s.cluster;
  const faults::MonteCarloResult& mc = r.monte_carlo;
  const auto& ttt = mc.time_to_train_s;
  const std::string trials =
      mc.trials < mc.trials_requested
          ? fmt::format("{} of {} trials (PARTIAL: stopped by {})", mc.trials, mc.trials_requested,
                        r.stopped_by.empty() ? "request" : r.stopped_by)
          : fmt::format("{} trials", mc.trials);
  line("time to train", fmt::format("p10 {}, p50 {}, p90 {} (mean {}) for {} tokens over {}", duration(ttt.p10),
                                    duration(ttt.p50), duration(ttt.p90), duration(ttt.mean),
                                    count(*m.train_tokens), trials));
  line("failure-free", fmt::format("{} ({:.0f} iterations of {}, no checkpoints)", duration(mc.ideal_time_s),
                                   static_cast<double>(r.iterations), duration(r.iteration_time_s)));
  line("interruptions", fmt::format("{:.1f} expected (standard error {:.2f}); mean time to interrupt {}",
                                    mc.expected_interruptions, mc.interruptions_standard_error,
                                    std::isfinite(r.mean_time_to_interrupt_s) ? duration(r.mean_time_to_interrupt_s)
                                                                              : std::string("never")));
  line("goodput", fmt::format("{:.1f}%: lost work {}, checkpoints {}, down {} (detection, restarts, reloads, "
                              "maintenance); {:.0f} GPU-hours lost",
                              100.0 * mc.goodput, duration(mc.lost_work_s), duration(mc.checkpointing_s),
                              duration(mc.down_s), mc.lost_gpu_hours));
  std::string host_copy;
  if (r.checkpoint_cost.background_write_s > 0 && s.failures) {
    using Source = faults::FailureConfig::Source;
    const Source from = s.failures->host_copy_source;
    host_copy = fmt::format(" (to host at {:.1f} GB/s, {})", s.failures->host_copy_bandwidth / 1e9,
                            from == Source::kProfile    ? "measured by the profile"
                            : from == Source::kScenario ? "the scenario's"
                            : from == Source::kPlatform ? "the platform's host link"
                                                        : "PCIe 4.0 x16 default");
  }
  line("checkpoints",
       fmt::format("{} every {} ({}), {:.0f} per run; {} {}, stall {}{}, reload {}", si(r.checkpoint_size.total_bytes, "B"),
                   duration(r.checkpoint_interval_s), r.checkpoint_interval_auto ? "auto: Daly" : "fixed",
                   mc.expected_checkpoints,
                   r.checkpoint_cost.background_write_s > 0 ? "async, storage write" : "blocking write",
                   duration(r.checkpoint_cost.background_write_s > 0 ? r.checkpoint_cost.background_write_s
                                                                     : r.checkpoint_cost.blocking_s),
                   duration(r.checkpoint_cost.blocking_s), host_copy, duration(r.checkpoint_cost.reload_s)));
  if (mc.stragglers > 0 || mc.degraded_s > 0 || mc.shrunk_s > 0)
    line("slowdowns", fmt::format("{:.1f} straggler GPUs; {} on a degraded link; {} shrunk", mc.stragglers,
                                  duration(mc.degraded_s), duration(mc.shrunk_s)));
  if (m.cost_usd)
    line("cost", fmt::format("${:.0f} at ${:.2f} per GPU-hour (mean)", *m.cost_usd, *c.price_per_gpu_hour));
  if (m.energy_kwh) line("energy", energy_text(*m.energy_kwh, m.average_power_w, "mean; ", r.gpu_utilization, c));
}

// Time to train, cost and energy without failures.
void add_time_to_train(Lines& line, const config::Scenario& s, const Metrics& m) {
  const auto& c = s.cluster;
  if (!m.time_to_train_s) {
    line("time to train", "set training.train_tokens to get time to train, cost and energy");
    return;
  }
  line("time to train", fmt::format("{} for {} tokens ({:.0f} iterations, no failures modeled)",
                                    duration(*m.time_to_train_s), count(*m.train_tokens), *m.iterations_to_train));
  if (m.cost_usd)
    line("cost", fmt::format("${:.0f} at ${:.2f} per GPU-hour", *m.cost_usd, *c.price_per_gpu_hour));
  if (m.energy_kwh) line("energy", energy_text(*m.energy_kwh, m.average_power_w, "", m.gpu_utilization, c));
}

}  // namespace

std::string summary_text(const config::Scenario& s, const Metrics& m) {
  Lines line;
  line.raw(fmt::format("trainsim: {}\n\n", s.name));
  add_setup(line, s, m);
  if (m.calibration) add_calibration(line, s, *m.calibration);
  line.blank();
  add_performance(line, s, m);
  add_memory(line, m);
  if (m.reliability) {
    line.blank();
    add_full_run(line, s, m, *m.reliability);
  } else {
    add_time_to_train(line, s, m);
  }
  return line.take();
}

}  // namespace trainsim::report
