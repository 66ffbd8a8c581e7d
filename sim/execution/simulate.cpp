#include "execution/simulate.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <memory>
#include <stdexcept>
#include <string_view>

#include "execution/async_replay.h"
#include "execution/executor.h"
#include "execution/memory_timeline.h"
#include "hardware/compute_model.h"
#include "hardware/profiled_compute_model.h"
#include "network/collective_engine.h"
#include "network/measured_collectives.h"
#include "network/topology_builders.h"
#include "workload/parameters.h"
#include "workload/transformer_ops.h"

namespace trainsim::exec {

namespace {

// Links whose utilization over time goes into the trace: those of rank 0 (its
// NVLink ports, or on a mesh its links to the other GPUs of its node; its server's
// NICs and their cables).
std::vector<std::uint32_t> watched_links(const net::Topology& t, int server_nics) {
  std::vector<std::uint32_t> links{t.gpu_up(0), t.gpu_down(0)};
  if (t.mesh())
    for (long long j = 1; j < t.gpus_per_node(); ++j) {
      links.push_back(t.mesh_link(0, j));
      links.push_back(t.mesh_link(j, 0));
    }
  for (int r = 0; r < std::min(server_nics, t.nics_per_node()); ++r) {
    if (!t.nic_connected(0, r)) continue;
    links.push_back(t.nic_uplink(0, r));
    links.push_back(t.nic_downlink(0, r));
  }
  return links;
}

// An op's name without its layer and pass-repeat marks ("layer3.mlp_act.recompute"
// -> "mlp_act"), so that one reason stands for the op in every layer.
std::string_view op_kind(std::string_view name) {
  constexpr std::string_view kLayer = "layer";
  if (name.starts_with(kLayer)) {
    std::size_t i = kLayer.size();
    while (i < name.size() && std::isdigit(static_cast<unsigned char>(name[i])) != 0) ++i;
    if (i > kLayer.size() && i < name.size() && name[i] == '.') name.remove_prefix(i + 1);
  }
  constexpr std::string_view kRecompute = ".recompute";
  if (name.ends_with(kRecompute)) name.remove_suffix(kRecompute.size());
  return name;
}

// Counts the compute kernels of the first iteration by where their cost came from.
CalibrationUsage tally(const workload::TaskGraph& graph, const hw::ProfiledComputeModel& model,
                       hw::Precision precision, const net::MeasuredCollectives& collectives) {
  CalibrationUsage usage;
  usage.fallback_efficiency = model.fallback_efficiency(precision);
  for (const workload::Task& t : graph.tasks()) {
    if (t.iteration != 0) continue;
    const workload::Work& w = graph.work(t);
    if (w.collective) {
      ++(collectives.seconds(*w.collective) ? usage.collectives_measured : usage.collectives_modeled);
      continue;
    }
    if (w.host) continue;  // copies to and from host memory, the host's update: no kernel
    const hw::CostLookup cost = model.lookup(w.compute, precision);
    if (cost.measured()) {
      ++usage.measured;
      continue;
    }
    ++(cost.stand_in() ? usage.stand_in : usage.fallback);
    if (usage.fallback_reasons.size() >= CalibrationUsage::kMaxReasons) continue;
    std::string reason = std::string(op_kind(w.name)) + ": " + model.fallback_reason(w.compute, precision);
    if (std::find(usage.fallback_reasons.begin(), usage.fallback_reasons.end(), reason) == usage.fallback_reasons.end())
      usage.fallback_reasons.push_back(std::move(reason));
  }
  return usage;
}

// async_ps: one worker's step, push and pull from its simulated iteration, the
// servers' times from their NIC bandwidth and the update kernel; then the replay
// of all workers at the servers (docs/model.md, "Asynchronous training").
AsyncPsResult replay_parameter_servers(const config::Scenario& s, const SimulationOutput& out,
                                       const hw::ComputeModel& compute, const SimulateOptions& options) {
  core::Time step = 0;
  core::Time pushed = 0;
  core::Time pulled = 0;
  for (const Span& span : out.timeline.spans) {
    const workload::Task& t = out.iteration.graph[span.task];
    if (t.iteration != 0) continue;
    if (t.stream == workload::Stream::kCompute) step = std::max(step, span.end);
    if (t.role == workload::Role::kPsPush) pushed = std::max(pushed, span.end);
    if (t.role == workload::Role::kPsPull) pulled = std::max(pulled, span.end);
  }
  AsyncPsResult r;
  const double params = workload::count_parameters(s.model).total;
  const double servers = static_cast<double>(s.parallel.num_servers);
  const hw::InterNodeNetwork& nic = s.cluster.inter_node;
  // A co-located server uses the NIC of the GPU it sits beside; a dedicated
  // server node all of its NICs.
  const double nics = s.parallel.server_placement == workload::ServerPlacement::kDedicated
                          ? static_cast<double>(nic.nics_per_node)
                          : 1.0;
  r.server_bandwidth = nics * nic.nic_bandwidth * nic.bandwidth_efficiency;
  r.bytes_per_server_push = params * hw::bytes_per_element(s.training.grad_reduce_dtype) / servers;
  r.bytes_per_server_pull = params * workload::state_bytes_per_parameter(s.training).weights / servers;
  const workload::TransformerOps ops(s.model, s.training, s.training.micro_batch_size);
  r.server_update = core::from_seconds(compute.seconds(ops.optimizer_step(params / servers).work, s.training.precision));
  AsyncPsInputs& in = r.inputs;
  in.workers = s.parallel.data;
  in.staleness_bound = s.parallel.staleness;
  in.step = step;
  in.push = std::max<core::Time>(0, pushed - step);
  in.pull = std::max<core::Time>(0, pulled - std::max(step, pushed));
  in.server_push = core::from_seconds(r.bytes_per_server_push / r.server_bandwidth) + r.server_update;
  in.server_pull = core::from_seconds(r.bytes_per_server_pull / r.server_bandwidth);
  // A worker is a data-parallel replica: rank = stage x (t d) + worker x t + TP index.
  // Its step runs at the pace of its slowest GPU.
  if (!options.slow_ranks.empty()) {
    in.slowdown.assign(static_cast<std::size_t>(in.workers), 1.0);
    const long long tp = s.parallel.tensor;
    const long long per_stage = tp * s.parallel.data;
    for (const auto& [rank, slowdown] : options.slow_ranks) {
      const auto worker = static_cast<std::size_t>((rank % per_stage) / tp);
      in.slowdown[worker] = std::max(in.slowdown[worker], 1.0 + slowdown);
    }
  }
  r.report = replay_async_ps(in);
  return r;
}

// The slowdown of each simulated rank that stands for a slow GPU: a
// representative takes the largest of the ranks it stands for.
std::map<int, double> representative_slowdown(const SimulationOutput& out, const SimulateOptions& options) {
  std::map<int, double> slowdown;
  for (const auto& [rank, factor] : options.slow_ranks) {
    const int rep = out.iteration.representative.at(static_cast<std::size_t>(rank));
    slowdown[rep] = std::max(slowdown[rep], factor);
  }
  return slowdown;
}

// The communication a scenario's collectives run on: its network model over the
// planner's topology, with the calibration profile's measured collectives in
// front (network/measured_collectives.h) when it has any.
class Communication {
 public:
  Communication(const config::Scenario& s, net::CollectivePlanner& planner, bool link_counters)
      : measured_(s.calibration ? net::MeasuredCollectives(s.calibration->profile->collectives)
                                : net::MeasuredCollectives()) {
    if (s.simulation.network_model == config::NetworkModel::kFlow) {
      auto backend = std::make_unique<net::FlowBackend>(
          planner, link_counters ? watched_links(planner.topology(), s.cluster.inter_node.nics_per_node)
                                 : std::vector<std::uint32_t>{});
      flow_ = backend.get();
      model_ = std::move(backend);
    } else {
      model_ = std::make_unique<net::ScheduleBackend>(planner);
    }
    if (!measured_.empty()) measured_backend_ = std::make_unique<net::MeasuredBackend>(measured_, *model_);
  }
  [[nodiscard]] net::CommunicationBackend& backend() {
    return measured_backend_ ? static_cast<net::CommunicationBackend&>(*measured_backend_) : *model_;
  }
  [[nodiscard]] const net::CommunicationBackend& model() const { return *model_; }
  [[nodiscard]] const net::FlowBackend* flow() const { return flow_; }  // the flow model's, else null
  [[nodiscard]] const net::MeasuredCollectives& measured() const { return measured_; }

 private:
  net::MeasuredCollectives measured_;
  std::unique_ptr<net::CommunicationBackend> model_;
  net::FlowBackend* flow_ = nullptr;
  std::unique_ptr<net::MeasuredBackend> measured_backend_;
};

// The cluster the network model sees: dedicated parameter servers are one node
// each, after the workers' nodes.
hw::ClusterSpec network_cluster(const config::Scenario& s) {
  hw::ClusterSpec c = s.cluster;
  if (s.parallel.mode == workload::TrainingMode::kAsyncPs &&
      s.parallel.server_placement == workload::ServerPlacement::kDedicated)
    c.num_nodes += s.parallel.num_servers;
  return c;
}

// What the flow model saw: flows, rate solves, the bytes each link carried, and
// the utilization series of the watched links.
void record_network(const net::FlowBackend& flow, const net::Topology& topology, NetworkReport& report) {
  const net::LinkStatistics& st = flow.statistics();
  report.flows = st.flows;
  report.solves = st.solves;
  for (std::uint32_t l = 0; l < st.bytes.size(); ++l) {
    if (st.bytes[l] <= 0.0) continue;
    const net::LinkView v = topology.link(l);
    report.links.push_back({topology.link_name(l), st.bytes[l], v.capacity});
  }
  for (const auto& [link, series] : st.series) {
    CounterSeries c;
    c.name = "utilization " + topology.link_name(link);
    c.points = series;
    report.counters.push_back(std::move(c));
  }
}

}  // namespace

MixedHardware::MixedHardware(const config::Scenario& s, const workload::IterationGraph& iteration) {
  if (!s.cluster.heterogeneous()) return;
  models_ = hw::pool_compute_models(s.cluster, s.calibration ? s.calibration->profile.get() : nullptr);
  // Each stage's pool, resolved with the layout (scenario::resolve_mixed_cluster).
  pace_ = s.parallel.replica_stage_pools;
  const std::size_t pp = iteration.simulated_ranks.size();
  if (pace_.size() != pp)
    throw std::logic_error("simulate: a mixed cluster's layout is not resolved (scenario::resolve_mixed_cluster)");
  for (int k = 0; k < s.cluster.num_pools(); ++k) {
    const hw::GpuPool& pool = s.cluster.pools[static_cast<std::size_t>(k)];
    pools_.push_back({models_[static_cast<std::size_t>(k)].get(),
                      {1.0 + pool.gpu.overlap_compute_slowdown, 1.0 + pool.gpu.overlap_memory_slowdown},
                      pool.host});
  }
  for (std::size_t st = 0; st < pp; ++st) rank_pool_[iteration.simulated_ranks[st]] = pace_[st];
}

void MixedHardware::apply(Executor& executor) const {
  if (!pools_.empty()) executor.set_pools(pools_, rank_pool_);
}

std::unique_ptr<hw::ComputeModel> compute_model_for(const config::Scenario& s) {
  if (s.calibration) return std::make_unique<hw::ProfiledComputeModel>(*s.calibration->profile, s.cluster.gpu);
  return std::make_unique<hw::RooflineComputeModel>(s.cluster.gpu);
}

namespace {

// `out.iteration` run on the scenario's cluster, network and cost models (with
// local SGD's two extra runs), and what the run reports.
void run_iteration(const config::Scenario& s, const SimulateOptions& options, SimulationOutput& out) {
  const std::unique_ptr<hw::ComputeModel> compute_model = compute_model_for(s);
  const auto* profiled = dynamic_cast<const hw::ProfiledComputeModel*>(compute_model.get());
  const hw::ComputeModel& compute = *compute_model;
  const net::Topology topology = net::build_topology(network_cluster(s));
  net::CollectivePlanner planner = planner_for(s, topology);
  Communication communication(s, planner, options.link_counters);
  out.compute_model = std::string(compute.name());
  out.network_model = std::string(communication.model().name());
  out.network.topology = topology.description;

  Executor executor(compute, communication.backend(), s.training.precision);
  executor.set_overlap_slowdown(s.cluster.gpu.overlap_compute_slowdown, s.cluster.gpu.overlap_memory_slowdown);
  executor.set_host(s.cluster.host, s.cluster.gpus_per_node);
  const MixedHardware mixed(s, out.iteration);
  mixed.apply(executor);
  out.stage_pools = mixed.pace();
  // async_ps: workers do not wait for each other, so a slow GPU slows only its own
  // worker; the replay takes it per worker and the simulated step stays nominal.
  const bool async_ps = s.parallel.mode == workload::TrainingMode::kAsyncPs;
  if (!options.slow_ranks.empty() && !async_ps) executor.set_compute_slowdown(representative_slowdown(out, options));
  const bool local_sgd = s.parallel.mode == workload::TrainingMode::kLocalSgd;
  const double runs = local_sgd ? 3.0 : 1.0;  // executor runs, each an equal share of the progress
  double runs_done = 0.0;
  const auto run = [&](const workload::TaskGraph& graph) {
    core::Simulator sim;
    core::Progress progress(&options.progress, runs_done / runs, (runs_done + 1.0) / runs, graph.size());
    runs_done += 1.0;
    return executor.run(graph, sim, &progress);
  };
  out.timeline = run(out.iteration.graph);
  if (local_sgd) {
    // One step with the parameter average and one without (docs/model.md,
    // "Asynchronous training"): the timeline shown is the averaging one.
    LocalSgdResult local;
    local.sync_period = s.parallel.sync_period;
    workload::ParallelConfig every = s.parallel;
    every.sync_period = 1;
    workload::ParallelConfig never = s.parallel;
    never.sync_period = s.simulation.iterations + 1;
    out.iteration = workload::build_iteration_graph(s.model, s.training, every, s.cluster, 1);
    out.timeline = run(out.iteration.graph);
    local.averaged_step = out.timeline.makespan;
    local.plain_step =
        run(workload::build_iteration_graph(s.model, s.training, never, s.cluster, 1).graph).makespan;
    out.async.local_sgd = local;
  }
  if (async_ps) out.async.async_ps = replay_parameter_servers(s, out, compute, options);
  if (options.memory_timeline)
    out.memory_over_time =
        track_memory(s, out, out.iteration.simulated_ranks.at(static_cast<std::size_t>(out.memory.stage)));
  if (profiled != nullptr)
    out.calibration = tally(out.iteration.graph, *profiled, s.training.precision, communication.measured());

  if (const net::FlowBackend* flow = communication.flow()) record_network(*flow, topology, out.network);
}

}  // namespace

SimulationOutput simulate(const config::Scenario& s, const SimulateOptions& options) {
  SimulationOutput out;
  out.iteration = workload::build_iteration_graph(s.model, s.training, s.parallel, s.cluster, s.simulation.iterations);
  out.memory = options.memory ? *options.memory : workload::estimate_memory(s.model, s.training, s.parallel);
  run_iteration(s, options, out);
  return out;
}

SimulationOutput simulate_graph(const config::Scenario& s, workload::IterationGraph iteration,
                                const SimulateOptions& options) {
  if (s.parallel.mode != workload::TrainingMode::kSync)
    throw std::invalid_argument("a task graph from a file simulates synchronous training only (parallelism.mode \"sync\")");
  SimulationOutput out;
  out.iteration = std::move(iteration);
  out.memory = options.memory ? *options.memory : workload::estimate_memory(s.model, s.training, s.parallel);
  run_iteration(s, options, out);
  return out;
}

net::Topology network_topology(const config::Scenario& s) { return net::build_topology(network_cluster(s)); }

net::CollectivePlanner planner_for(const config::Scenario& s, const net::Topology& topology) {
  return net::CollectivePlanner(topology, s.simulation.collective_algorithm, s.cluster.inter_node.multipath,
                                net::routing_of(s.cluster.inter_node.routing));
}

core::Time step_with_slow_ranks(const config::Scenario& s, const SimulationOutput& healthy,
                                net::CollectivePlanner& planner, const SimulateOptions& options) {
  if (s.parallel.mode != workload::TrainingMode::kSync)
    throw std::invalid_argument("step_with_slow_ranks: synchronous training only");
  const std::unique_ptr<hw::ComputeModel> compute = compute_model_for(s);
  Communication communication(s, planner, options.link_counters);
  Executor executor(*compute, communication.backend(), s.training.precision);
  executor.set_overlap_slowdown(s.cluster.gpu.overlap_compute_slowdown, s.cluster.gpu.overlap_memory_slowdown);
  executor.set_host(s.cluster.host, s.cluster.gpus_per_node);
  const MixedHardware mixed(s, healthy.iteration);
  mixed.apply(executor);
  if (!options.slow_ranks.empty()) executor.set_compute_slowdown(representative_slowdown(healthy, options));
  core::Simulator sim;
  return executor.run(healthy.iteration.graph, sim).makespan / healthy.iteration.iterations;
}

}  // namespace trainsim::exec
