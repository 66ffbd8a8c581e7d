#include "execution/full_run.h"

#include <algorithm>
#include <atomic>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <tuple>

#include <fmt/format.h>

#include "core/parallel.h"
#include "execution/utilization.h"
#include "hardware/power.h"
#include "network/topology_builders.h"
#include "workload/layout.h"
#include "workload/memory.h"
#include "workload/parameters.h"

namespace trainsim::exec {

namespace {

// The replay's states, reduced to what changes an iteration: with synchronous
// training a pipeline stage runs at its slowest rank's pace, so stragglers
// reduce to the largest slowdown per stage.
using StateKey = std::tuple<int, bool, std::vector<double>>;

// The replay's inputs: the job's failure processes and recovery policy, the
// checkpoint plan, stragglers, degraded links, maintenance, power and price.
faults::ReplayConfig replay_config(const config::Scenario& s, const FullRunReport& rep, long long train_tokens,
                                   int per_node_loss) {
  const faults::FailureConfig& f = *s.failures;
  const hw::ClusterSpec& c = s.cluster;
  faults::ReplayConfig rc;
  rc.train_tokens = train_tokens;
  rc.num_gpus = c.num_gpus();
  rc.num_nodes = c.num_nodes;
  rc.data_parallel = s.parallel.data;
  rc.replicas_per_node_loss = per_node_loss;
  rc.processes = rep.processes;
  rc.distribution = f.distribution;
  rc.weibull_shape = f.weibull_shape;
  rc.detection = core::from_seconds(f.detection_time_s);
  rc.restart = core::from_seconds(f.restart_overhead_s);
  rc.reload = core::from_seconds(rep.checkpoint_cost.reload_s);
  rc.policy = f.policy;
  rc.hot_spares = f.hot_spares.value_or(-1);
  rc.repair = core::from_seconds(f.repair_time_s.value_or(0.0));
  rc.checkpoint_interval = core::from_seconds(rep.checkpoint_interval_s);
  rc.checkpoint_blocking = core::from_seconds(rep.checkpoint_cost.blocking_s);
  rc.checkpoint_background = core::from_seconds(rep.checkpoint_cost.background_write_s);
  rc.straggler_fraction = f.straggler_fraction;
  rc.straggler_slowdown = f.straggler_slowdown;
  if (f.degraded_links_per_1000_node_days > 0.0)
    rc.degraded_mean_s = 1000.0 / f.degraded_links_per_1000_node_days * 86400.0 / static_cast<double>(c.num_nodes);
  rc.degraded_duration = core::from_seconds(f.degraded_link_duration_s);
  if (f.maintenance_interval_s) {
    rc.maintenance_interval = core::from_seconds(*f.maintenance_interval_s);
    rc.maintenance_duration = core::from_seconds(f.maintenance_duration_s);
  }
  // Power (docs/model.md, "Energy"): the cluster's figures, as for a run without failures.
  const long long spare_nodes = f.hot_spares.value_or(0);
  rc.power = hw::power_draw(c, rep.gpu_utilization, spare_nodes);
  rc.pue = c.pue;
  rc.allocated_gpus = (c.num_nodes + spare_nodes) * c.gpus_per_node;
  rc.price_per_gpu_hour = c.price_per_gpu_hour.value_or(0.0);

  return rc;
}

// Nodes per scale-up domain once a shrunk job keeps `nodes`: the largest count
// up to the cluster's that tiles them and keeps the tensor- and context-parallel
// groups inside whole domains, so the network model's domains stay whole
// (docs/reliability.md, "Elastic shrink"); a pessimistic stand-in for the one
// partial domain the job really keeps.
int shrunk_domain(int nodes_per_domain, int nodes, int gpus_per_node, int tp, int cp) {
  for (int k = std::min(nodes_per_domain, nodes); k > 1; --k)
    if (nodes % k == 0 && workload::model_blocks_align(tp, cp, k * gpus_per_node)) return k;
  return 1;
}

}  // namespace

faults::CheckpointSize checkpoint_size_of(const config::Scenario& s, const faults::FailureConfig& f) {
  const workload::StateBytes per = workload::state_bytes_per_parameter(s.training);
  faults::CheckpointInputs in;
  in.parameters = workload::count_parameters(s.model).total;
  in.weight_bytes = per.weights;
  in.optimizer_bytes = per.optimizer;
  in.tensor = s.parallel.tensor;
  in.pipeline = s.parallel.pipeline;
  in.data = s.parallel.data;
  in.zero_stage = s.parallel.zero_stage;
  faults::CheckpointSize size = faults::checkpoint_size(in);
  if (f.checkpoint_size_bytes) size.total_bytes = *f.checkpoint_size_bytes;
  return size;
}

faults::StatePerformance performance_of(const SimulationOutput& out) {
  return {out.timeline.makespan / out.iteration.iterations, out.iteration.tokens_per_iteration};
}

FullRunReport simulate_full_run(const config::Scenario& s, const SimulationOutput& healthy,
                                const core::ProgressCallback& progress, const std::function<bool()>& stop) {
  if (!s.failures) throw std::invalid_argument("simulate_full_run: the scenario has no failures section");
  if (!s.training.train_tokens) throw std::invalid_argument("simulate_full_run: needs training.train_tokens");
  const faults::FailureConfig& f = *s.failures;
  FullRunReport rep;
  const faults::StatePerformance base = performance_of(healthy);
  rep.iteration_time_s = core::to_seconds(base.iteration_time);
  const auto train_tokens = static_cast<long long>(*s.training.train_tokens);
  rep.iterations = (train_tokens + base.tokens_per_iteration - 1) / base.tokens_per_iteration;
  const ComputeBusy busy = compute_busy(healthy);
  const double iters = healthy.iteration.iterations;
  rep.gpu_utilization = gpu_utilization(core::to_seconds(busy.total) / iters, busy.ranks, rep.iteration_time_s);

  // Checkpoint size and cost (docs/model.md, "Reliability").
  rep.checkpoint_size = checkpoint_size_of(s, f);
  rep.checkpoint_cost = faults::checkpoint_cost(rep.checkpoint_size, f);

  const hw::ClusterSpec& c = s.cluster;
  const long long switches = f.switch_mtbf_s ? net::build_topology(c).num_switches() : 0;
  rep.processes = faults::job_processes(f, c.num_gpus(), c.num_nodes,
                                        static_cast<long long>(c.num_nodes) * c.inter_node.nics_per_node, switches);
  // Weibull processes keep their mean, so the mean time to interrupt is the same sum.
  rep.mean_time_to_interrupt_s = faults::mean_time_to_interrupt(rep.processes);
  const double d = rep.checkpoint_cost.blocking_s;
  if (f.checkpoint_interval_s) {
    rep.checkpoint_interval_s = *f.checkpoint_interval_s;
  } else if (rep.processes.empty()) {
    rep.checkpoint_interval_auto = true;  // nothing fails: no checkpoints
  } else {
    rep.checkpoint_interval_auto = true;
    rep.young_interval_s = faults::young_interval(d, rep.mean_time_to_interrupt_s);
    // At least one iteration, and (async) at least the background write: a
    // shorter interval would only queue checkpoints behind the storage write.
    rep.checkpoint_interval_s = std::max({faults::daly_interval(d, rep.mean_time_to_interrupt_s),
                                          rep.iteration_time_s, rep.checkpoint_cost.background_write_s});
  }

  // Elastic shrink takes whole data-parallel replicas out with a node.
  const long long replica_gpus = static_cast<long long>(s.parallel.model_parallel_size());
  int per_node_loss = 1;
  if (replica_gpus < c.gpus_per_node) per_node_loss = static_cast<int>(c.gpus_per_node / replica_gpus);
  if (f.policy == faults::RecoveryPolicy::kElasticShrink &&
      (replica_gpus % c.gpus_per_node != 0 && c.gpus_per_node % replica_gpus != 0))
    throw std::invalid_argument(fmt::format(
        "failures.policy \"elastic_shrink\" needs a model replica (tensor x pipeline x context = {} GPUs) that is "
        "a multiple or a divisor of a node's {} GPUs",
        replica_gpus, c.gpus_per_node));

  const faults::ReplayConfig rc = replay_config(s, rep, train_tokens, per_node_loss);

  // States with stragglers alone keep the cluster and every collective: they run
  // the healthy iteration graph again on planners whose routes outlive a state
  // (one per thread at a time, from a pool; step_with_slow_ranks).
  const bool reuse_graph = s.parallel.mode == workload::TrainingMode::kSync;
  std::mutex pool_mutex;
  std::unique_ptr<const net::Topology> topology;  // built by the first state that needs it
  std::vector<std::unique_ptr<net::CollectivePlanner>> planners;
  const auto step_with_stragglers = [&](const SimulateOptions& options) {
    std::unique_ptr<net::CollectivePlanner> planner;
    {
      const std::lock_guard<std::mutex> lock(pool_mutex);
      // Constructed in place from the returned topology: a move of it trips GCC 12's
      // -Wmaybe-uninitialized inside Boost.Graph's edge iterators.
      if (!topology) topology.reset(new net::Topology(network_topology(s)));  // NOLINT(cppcoreguidelines-owning-memory)
      if (!planners.empty()) {
        planner = std::move(planners.back());
        planners.pop_back();
      } else {
        planner = std::make_unique<net::CollectivePlanner>(planner_for(s, *topology));
      }
    }
    const core::Time step = step_with_slow_ranks(s, healthy, *planner, options);
    const std::lock_guard<std::mutex> lock(pool_mutex);
    planners.push_back(std::move(planner));
    return faults::StatePerformance{step, base.tokens_per_iteration};
  };

  // The oracle: one iteration simulation per distinct reduced state. Trials on
  // different threads may ask for different states at once (faults/replay.h):
  // each reduced state is simulated by the first to ask, outside the lock, and
  // the others wait for its answer.
  const int pp = s.parallel.pipeline;
  const long long stage_gpus = c.num_gpus() / pp;
  core::OnceCache<StateKey, faults::StatePerformance> cache;
  std::atomic<int> simulated{0};
  const auto simulate_state = [&](const faults::ClusterState& st, const std::vector<double>& per_stage) {
    config::Scenario v = s;
    if (st.degraded_link) {
      v.cluster.inter_node.nic_bandwidth *= f.degraded_link_bandwidth;
      for (hw::GpuPool& pool : v.cluster.pools) pool.nic_bandwidth *= f.degraded_link_bandwidth;
    }
    if (st.lost_replicas > 0) {
      const int dp = s.parallel.data - st.lost_replicas;
      const long long microbatches = workload::microbatches_per_replica(s.training, s.parallel);
      v.parallel.data = dp;
      v.training.global_batch_size = s.training.micro_batch_size * dp * microbatches;
      v.cluster.num_nodes = static_cast<int>(dp * replica_gpus / c.gpus_per_node);
      v.cluster.nodes_per_domain =
          shrunk_domain(c.nodes_per_domain, v.cluster.num_nodes, c.gpus_per_node, s.parallel.tensor, s.parallel.context);
    }
    SimulateOptions options;
    const long long v_stage_gpus = v.cluster.num_gpus() / pp;
    for (int k = 0; k < pp; ++k)
      if (per_stage[static_cast<std::size_t>(k)] > 0.0)
        options.slow_ranks.emplace_back(k * v_stage_gpus, per_stage[static_cast<std::size_t>(k)]);
    if (st.lost_replicas > 0 || st.degraded_link) return performance_of(simulate(v, options));
    if (options.slow_ranks.empty()) return base;
    return reuse_graph ? step_with_stragglers(options) : performance_of(simulate(v, options));
  };
  const faults::IterationOracle oracle = [&](const faults::ClusterState& st) {
    std::vector<double> per_stage(static_cast<std::size_t>(pp), 0.0);
    for (const auto& [rank, slow] : st.slow_ranks) {
      auto& x = per_stage[static_cast<std::size_t>(rank / stage_gpus)];
      x = std::max(x, slow);
    }
    const bool healthy_state = st.lost_replicas == 0 && !st.degraded_link &&
                               std::all_of(per_stage.begin(), per_stage.end(), [](double x) { return x == 0.0; });
    return cache.get(StateKey{st.lost_replicas, st.degraded_link, per_stage}, [&] {
      if (!healthy_state) ++simulated;
      return simulate_state(st, per_stage);
    });
  };
  rep.monte_carlo = faults::monte_carlo(rc, oracle, f.seed, f.trials, f.threads, progress, stop);
  rep.states_simulated = simulated.load();
  return rep;
}

}  // namespace trainsim::exec
