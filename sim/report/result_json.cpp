#include "report/result_json.h"

#include <cmath>

#include "io/atomic_file.h"
#include "report/result_keys.h"

namespace trainsim::report {

namespace {

// A mixed cluster's pools and each pipeline stage's layers and pacing pool (docs/results.md).
nlohmann::ordered_json mixed_cluster_json(const config::Scenario& s, const MixedSummary& mixed) {
  nlohmann::ordered_json pools = nlohmann::ordered_json::array();
  for (int k = 0; k < s.cluster.num_pools(); ++k) {
    const hw::GpuPool& p = s.cluster.pools[static_cast<std::size_t>(k)];
    pools.push_back({{"gpu", p.gpu.name},
                     {"num_nodes", p.num_nodes},
                     {"num_gpus", s.cluster.pool_gpus(k)},
                     {"price_per_gpu_hour", optional_number(p.price_per_gpu_hour)}});
  }
  return {{"pools", pools},
          {"pipeline_balance", s.parallel.pipeline_balance == workload::PipelineBalance::kSpeed ? "speed" : "even"},
          {"balanced_by_speed", s.parallel.balanced_by_speed},
          {"virtual_stage_layers", mixed.stage_layers},
          {"stage_pools", mixed.stage_pools}};
}

nlohmann::ordered_json reliability_json(const exec::FullRunReport& r, const config::Scenario& s,
                                        const std::string& run_timeline_file) {
  const faults::MonteCarloResult& mc = r.monte_carlo;
  const faults::FailureConfig& f = *s.failures;
  nlohmann::ordered_json j;
  j[result_key::kExpectedInterruptions] = mc.expected_interruptions;
  j[result_key::kGoodput] = mc.goodput;
  j["checkpoint_interval_s"] = r.checkpoint_interval_s;
  j["interruptions_standard_error"] = mc.interruptions_standard_error;
  j["time_to_train_s"] = {{"p10", mc.time_to_train_s.p10},   {"p50", mc.time_to_train_s.p50},
                          {"p90", mc.time_to_train_s.p90},   {"mean", mc.time_to_train_s.mean},
                          {"stddev", mc.time_to_train_s.stddev}};
  j["failure_free_time_s"] = mc.ideal_time_s;
  j["iteration_time_s"] = r.iteration_time_s;
  j["iterations"] = r.iterations;
  j["lost_gpu_hours"] = mc.lost_gpu_hours;
  j["expected_checkpoints"] = mc.expected_checkpoints;
  j["checkpoint_interval_auto"] = r.checkpoint_interval_auto;
  j["young_interval_s"] = r.young_interval_s;
  j["mean_time_to_interrupt_s"] = std::isfinite(r.mean_time_to_interrupt_s)
                                      ? nlohmann::ordered_json(r.mean_time_to_interrupt_s)
                                      : nlohmann::ordered_json(nullptr);
  j["checkpoint"] = {{"size_bytes", r.checkpoint_size.total_bytes},
                     {"per_gpu_bytes", r.checkpoint_size.per_gpu_bytes},
                     {"mode", f.checkpoint_mode == faults::CheckpointMode::kAsync ? "async" : "blocking"},
                     {"blocking_s", r.checkpoint_cost.blocking_s},
                     {"background_write_s", r.checkpoint_cost.background_write_s},
                     {"reload_s", r.checkpoint_cost.reload_s},
                     {"host_copy_bandwidth", f.host_copy_bandwidth},
                     {"host_copy_source", f.host_copy_source == faults::FailureConfig::Source::kProfile    ? "profile"
                                          : f.host_copy_source == faults::FailureConfig::Source::kScenario ? "scenario"
                                          : f.host_copy_source == faults::FailureConfig::Source::kPlatform ? "platform"
                                                                                                           : "default"}};
  j["mean_time_s"] = {{"lost_work", mc.lost_work_s},   {"checkpointing", mc.checkpointing_s}, {"down", mc.down_s},
                      {"degraded_link", mc.degraded_s}, {"shrunk", mc.shrunk_s}};
  j["stragglers"] = mc.stragglers;
  nlohmann::ordered_json processes = nlohmann::ordered_json::array();
  for (const faults::JobProcess& p : r.processes)
    processes.push_back({{"component", faults::to_string(p.component)}, {"job_mtbf_s", p.mean_s}});
  j["processes"] = processes;
  j["gpu_utilization"] = r.gpu_utilization;
  j["trials"] = mc.trials;
  if (mc.trials < mc.trials_requested)
    j["partial"] = {{"trials_requested", mc.trials_requested}, {"stopped_by", r.stopped_by}};
  j["seed"] = f.seed;
  j["states_simulated"] = r.states_simulated;
  j[result_key::kRunTimeline] = run_timeline_file.empty() ? nlohmann::ordered_json(nullptr)
                                                : nlohmann::ordered_json(run_timeline_file);
  return j;
}

}  // namespace

nlohmann::ordered_json result_json(const config::Scenario& s, const Metrics& m, const std::string& timeline_file,
                                   const std::string& run_timeline_file) {
  using namespace result_key;
  nlohmann::ordered_json j;
  j[kScenario] = m.scenario;
  j[kNumGpus] = m.num_gpus;
  put_timing(j, Timing{m.iteration_time_s, m.tokens_per_s, m.model_flops_per_iteration, m.tflops_per_gpu, m.mfu,
                       m.breakdown_s});
  if (const auto& i = m.iteration_time_interval)
    j[kIterationTimeInterval] = {{"p10", i->p10},
                                 {"p50", i->p50},
                                 {"p90", i->p90},
                                 {"gpu_speed_spread", i->gpu_speed_spread},
                                 {"kernel_time_cv", i->kernel_time_cv},
                                 {"kernels_per_step", i->kernels_per_step},
                                 {"gpus", i->gpus}};
  else
    j[kIterationTimeInterval] = nullptr;
  if (const auto& p = m.prediction_interval)
    j[kPredictionInterval] = {{"p10", p->p10}, {"p50", p->p50}, {"p90", p->p90}, {"corpus_cases", p->cases}};
  else
    j[kPredictionInterval] = nullptr;
  nlohmann::ordered_json mem;
  mem[kPeakBytes] = std::llround(m.memory.peak_bytes_per_gpu);
  mem[kCapacityBytes] = std::llround(m.memory.capacity_bytes_per_gpu);
  mem["context_bytes"] = std::llround(m.memory.context_bytes);
  mem[kFits] = m.memory.fits;
  if (!m.memory.fits) mem["reason"] = m.memory.reason;
  mem["breakdown_bytes"] = {{"weights", std::llround(m.memory.weights)},
                            {"gradients", std::llround(m.memory.gradients)},
                            {"optimizer_states", std::llround(m.memory.optimizer_states)},
                            {"activations", std::llround(m.memory.activations)}};
  mem["pipeline_stage"] = m.memory.stage;
  mem["in_flight_microbatches"] = m.memory.in_flight_microbatches;
  mem["timeline_peak_bytes"] = std::llround(m.memory.timeline_peak_bytes);
  mem["peak_time_s"] = m.memory.peak_time_s;
  mem["peak_task"] = m.memory.peak_task;
  if (m.memory.host_bytes_per_gpu > 0.0) {
    const MemoryReport& r = m.memory;
    const auto capacity = [&](double per_gpu) {
      return r.host_capacity_bytes_per_gpu > 0.0 ? nlohmann::ordered_json(std::llround(per_gpu)) : nullptr;
    };
    mem["host"] = {{"bytes_per_gpu", std::llround(r.host_bytes_per_gpu)},
                   {"capacity_bytes_per_gpu", capacity(r.host_capacity_bytes_per_gpu)},
                   {"bytes_per_node", std::llround(r.host_bytes_per_gpu * r.gpus_per_node)},
                   {"capacity_bytes_per_node", capacity(r.host_capacity_bytes_per_gpu * r.gpus_per_node)},
                   {"fits", r.host_fits}};
  }
  j[kMemory] = mem;
  put_totals(j, m.time_to_train_s, m.cost_usd, m.energy_kwh);
  j["average_power_w"] = optional_number(m.average_power_w);
  j["gpu_utilization"] = m.gpu_utilization;
  // Without a "failures" section: a failure-free run, nothing replayed.
  j[kReliability] = m.reliability ? reliability_json(*m.reliability, s, run_timeline_file)
                                  : nlohmann::ordered_json{{kExpectedInterruptions, 0.0},
                                                           {kGoodput, 1.0},
                                                           {"checkpoint_interval_s", 0.0}};
  j[kTimeline] = timeline_file.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(timeline_file);

  // Beyond the contract: what the figures rest on.
  j["tokens_per_iteration"] = m.tokens_per_iteration;
  j["iterations_to_train"] = optional_number(m.iterations_to_train);
  j["train_tokens"] = optional_number(m.train_tokens);
  j[kPeakFlopsPerGpu] = m.peak_flops_per_gpu;
  j["parameters"] = m.parameters;
  j["layout"] = {{"tensor_model_parallel_size", s.parallel.tensor},
                 {"pipeline_model_parallel_size", s.parallel.pipeline},
                 {"data_parallel_size", s.parallel.data},
                 {"context_parallel_size", s.parallel.context},
                 {"expert_model_parallel_size", s.parallel.expert},
                 {"micro_batch_size", s.training.micro_batch_size},
                 {"num_microbatches", m.num_microbatches},
                 {"gradient_buckets", m.gradient_buckets}};
  if (m.mixed) j["mixed_cluster"] = mixed_cluster_json(s, *m.mixed);
  j["cost_models"] = {{"compute", m.compute_model}, {"network", m.network_model}};
  if (m.async && m.async->mode == "async_ps") {
    const AsyncSummary& a = *m.async;
    nlohmann::ordered_json hist = nlohmann::ordered_json::array();
    for (const auto& [staleness, updates] : a.staleness) hist.push_back({staleness, updates});
    j["async"] = {{"mode", a.mode},
                  {"workers", a.workers},
                  {"num_servers", a.servers},
                  {"staleness_bound", a.staleness_bound},
                  {"worker_step_time_s", a.worker_step_time_s},
                  {"updates_per_s", a.updates_per_s},
                  {"server_utilization", a.server_utilization},
                  {"bytes_pushed_per_server", a.bytes_pushed_per_server},
                  {"bytes_pulled_per_server", a.bytes_pulled_per_server},
                  {"mean_staleness", a.mean_staleness},
                  {"max_staleness", a.max_staleness},
                  {"staleness_histogram", hist}};
  } else if (m.async) {
    j["async"] = {{"mode", m.async->mode},
                  {"sync_period", m.async->sync_period},
                  {"plain_step_s", m.async->plain_step_s},
                  {"averaged_step_s", m.async->averaged_step_s}};
  }
  if (m.calibration) {
    const CalibrationReport& c = *m.calibration;
    j["calibration"] = {{"profile", c.profile},   {"device", c.device},     {"date", c.date},
                        {"complete", c.complete}, {"measured", c.measured}, {"fallback", c.fallback},
                        {"stand_in", c.stand_in},                 {"fallback_reasons", c.fallback_reasons},
                        {"collectives_measured", c.collectives_measured},
                        {"collectives_modeled", c.collectives_modeled}};
    j["calibration"]["fallback_memory_bandwidth"] = optional_number(c.fallback_memory_bandwidth);
    j["calibration"]["fallback_matmul_points"] = c.fallback_matmul_points;
    j["calibration"]["launch_overhead_s"] = optional_number(c.launch_overhead_s);
    if (c.host_dispatch)
      j["calibration"]["host_dispatch"] = {{"framework", c.host_dispatch->framework},
                                           {"forward_s", c.host_dispatch->forward_s},
                                           {"backward_s", c.host_dispatch->backward_s},
                                           {"optimizer_s", c.host_dispatch->optimizer_s}};
    else
      j["calibration"]["host_dispatch"] = nullptr;
  } else {
    j["calibration"] = nullptr;
  }
  nlohmann::ordered_json net;
  net["topology"] = m.network.topology;
  net["flows"] = m.network.flows;
  net["rate_solves"] = m.network.solves;
  net["links_used"] = m.network.links_used;
  nlohmann::ordered_json busiest = nlohmann::ordered_json::array();
  for (const LinkSummary& l : m.network.busiest)
    busiest.push_back({{"link", l.name}, {"bytes", l.bytes}, {"capacity_bytes_per_s", l.capacity},
                       {"mean_utilization", l.mean_utilization}});
  net["busiest_links"] = busiest;
  j["network"] = net;
  j["iterations_simulated"] = m.iterations_simulated;
  return j;
}

void write_result(const std::filesystem::path& path, const nlohmann::ordered_json& result) {
  io::write_atomically(path, [&](std::ostream& out) { out << result.dump(2) << '\n'; });
}

}  // namespace trainsim::report
