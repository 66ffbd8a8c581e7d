// The full-run replay wired to the iteration simulator (execution/full_run.h):
// stragglers through the per-rank slowdown, the failure-free closed form, the
// Daly interval and determinism, on a small GPT-2 scenario.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "execution/full_run.h"
#include "execution/simulate.h"
#include "report/metrics.h"
#include "scenario/errors.h"
#include "scenario/reader.h"

namespace trainsim::exec {
namespace {

// GPT-2 124M, data parallel over one node of 8 H100; no overlap, so an
// iteration is forward + backward, then the gradient all-reduce, then the optimizer.
config::Scenario gpt2(const std::string& failures, const std::string& parallelism = "", int nodes = 1,
                        const std::string& tokens = "2e8") {
  const std::string text =
      R"({"cluster": {"gpu": "H100-SXM5-80GB", "price_per_gpu_hour": 2.0, "num_nodes": )" + std::to_string(nodes) +
      R"(}, "model": "gpt2-124m",
          "training": {"global_batch_size": 64, "micro_batch_size": 4, "train_tokens": )" + tokens + R"(},
          "parallelism": {"overlap_grad_reduce": false)" +
      parallelism + R"(},
          "simulation": {"network_model": "analytic"},
          "failures": )" +
      failures + "}";
  return scenario::parse_scenario_text(text, "test.json");
}

core::Time compute_busy(const SimulationOutput& out, int rank) {
  core::Time busy = 0;
  for (const Span& s : out.timeline.spans) {
    const workload::Task& t = out.iteration.graph[s.task];
    if (t.rank == rank && t.stream == workload::Stream::kCompute) busy += s.end - s.start;
  }
  return busy;
}

TEST(Straggler, OneTenPercentSlowGpuSlowsASynchronousIterationByItsComputeTimes0Point1) {
  const config::Scenario s = gpt2("null");
  const SimulationOutput healthy = simulate(s);
  SimulateOptions slow;
  slow.slow_ranks = {{5, 0.10}};  // GPU 5 of 8, 10% slower
  const SimulationOutput straggler = simulate(s, slow);
  // Every step waits for GPU 5: its compute kernels (forward, backward,
  // optimizer) are all on the critical path, the all-reduce is unchanged.
  const core::Time compute = compute_busy(healthy, healthy.iteration.simulated_ranks.front());
  const auto tasks = static_cast<core::Time>(healthy.iteration.graph.size());
  const core::Time expected = healthy.timeline.makespan + compute / 10;
  EXPECT_NEAR(static_cast<double>(straggler.timeline.makespan), static_cast<double>(expected),
              static_cast<double>(tasks));  // one ns of rounding per kernel
  EXPECT_GT(straggler.timeline.makespan - healthy.timeline.makespan, core::kMicrosecond);
}

TEST(Straggler, AsyncParameterServersLoseOnlyTheSlowWorkersShare) {
  // 8 asynchronous workers (a loose staleness bound, 8 co-located servers): GPU 5 10%
  // slower stretches only worker 5's step. With the servers far from saturated,
  // the rate is 7 / c + 1 / (c + 0.1 step) for the healthy cycle c, less what the
  // slow worker's pushes lose when they land behind the others' (under 1%).
  const config::Scenario s = gpt2("null", R"(, "mode": "async_ps", "num_servers": 8, "staleness": 1000)");
  const SimulationOutput healthy = simulate(s);
  SimulateOptions slow;
  slow.slow_ranks = {{5, 0.10}};
  const SimulationOutput straggler = simulate(s, slow);
  ASSERT_TRUE(healthy.async.async_ps && straggler.async.async_ps);
  const AsyncPsResult& h = *healthy.async.async_ps;
  const double cycle = 8.0 / h.report.updates_per_s;  // every worker's
  const double step = core::to_seconds(h.inputs.step);
  EXPECT_EQ(straggler.async.async_ps->inputs.step, h.inputs.step);  // the simulated step stays nominal
  EXPECT_NEAR(straggler.async.async_ps->report.updates_per_s, 7.0 / cycle + 1.0 / (cycle + 0.1 * step),
              1e-2 * h.report.updates_per_s);
  // Far less than the synchronous cost (every step waits for GPU 5).
  const config::Scenario sync = gpt2("null");
  const double sync_loss = core::to_seconds(simulate(sync, slow).timeline.makespan) /
                               core::to_seconds(simulate(sync).timeline.makespan) - 1.0;
  const double async_loss = h.report.updates_per_s / straggler.async.async_ps->report.updates_per_s - 1.0;
  EXPECT_LT(async_loss, sync_loss / 4);
}

TEST(Straggler, PipelineStageWithAStragglerPacesThePipeline) {
  const config::Scenario s = gpt2("null", R"(, "pp": 2)");
  const SimulationOutput healthy = simulate(s);
  SimulateOptions slow;
  slow.slow_ranks = {{7, 0.10}};  // a rank of stage 1
  const SimulationOutput straggler = simulate(s, slow);
  EXPECT_GT(straggler.timeline.makespan, healthy.timeline.makespan);
  // No more than every kernel of both stages 10% slower.
  SimulateOptions all;
  for (long long r = 0; r < 8; ++r) all.slow_ranks.emplace_back(r, 0.10);
  EXPECT_LE(straggler.timeline.makespan, simulate(s, all).timeline.makespan);
}

// The failure replay's straggler states run the healthy graph again on a
// planner they share (step_with_slow_ranks): the same step as simulating the
// state from scratch, on either network model, with the planner reused.
TEST(Straggler, RerunningTheHealthyGraphGivesTheSimulatedStep) {
  for (const char* model : {"analytic", "flow"}) {
    config::Scenario s = gpt2("null", R"(, "pp": 2)", 2);
    s.simulation.network_model = std::string(model) == "flow" ? config::NetworkModel::kFlow
                                                               : config::NetworkModel::kAnalytic;
    const SimulationOutput healthy = simulate(s);
    const net::Topology topology = network_topology(s);
    net::CollectivePlanner planner = planner_for(s, topology);
    for (long long rank : {7LL, 3LL, 12LL}) {
      SimulateOptions slow;
      slow.slow_ranks = {{rank, 0.25}};
      const SimulationOutput fresh = simulate(s, slow);
      EXPECT_GT(fresh.timeline.makespan, healthy.timeline.makespan) << model << " rank " << rank;
      EXPECT_EQ(step_with_slow_ranks(s, healthy, planner, slow),
                fresh.timeline.makespan / fresh.iteration.iterations)
          << model << " rank " << rank;
    }
  }
}

TEST(Straggler, RerunningTheHealthyGraphIsForSynchronousTrainingOnly) {
  const config::Scenario s = gpt2("null", R"(, "mode": "local_sgd", "sync_period": 4)");
  const SimulationOutput healthy = simulate(s);
  const net::Topology topology = network_topology(s);
  net::CollectivePlanner planner = planner_for(s, topology);
  EXPECT_THROW(step_with_slow_ranks(s, healthy, planner, {}), std::invalid_argument);
}

TEST(FullRun, NoFailuresIsIterationsTimesIterationTimePlusCheckpointsExactly) {
  const config::Scenario s = gpt2(R"({"failures_per_1000_node_days": 0, "checkpoint_interval": "20s",
                                        "checkpoint_write_bandwidth": "10GB/s", "trials": 3})");
  const SimulationOutput healthy = simulate(s);
  const FullRunReport r = simulate_full_run(s, healthy);
  const core::Time it = healthy.timeline.makespan / healthy.iteration.iterations;
  const long long tokens = healthy.iteration.tokens_per_iteration;  // 64 x 1024
  const long long iterations = (200'000'000 + tokens - 1) / tokens;  // 3052
  ASSERT_EQ(r.iterations, iterations);
  const long long every = (20 * core::kSecond + it - 1) / it;
  const long long checkpoints = (iterations - 1) / every;
  // 124M parameters x 14 B (bf16 weights, Adam with fp32 master) over 10 GB/s.
  const double size = r.checkpoint_size.total_bytes;
  EXPECT_NEAR(size / 14.0, 124.4e6, 0.5e6);
  const core::Time write = core::from_seconds(size / 10e9);
  for (const faults::TrialResult& t : r.monte_carlo.per_trial) {
    EXPECT_EQ(t.wall, iterations * it + checkpoints * write);
    EXPECT_EQ(t.interruptions, 0);
  }
  EXPECT_EQ(r.monte_carlo.expected_interruptions, 0.0);
  EXPECT_EQ(r.monte_carlo.time_to_train_s.p10, r.monte_carlo.time_to_train_s.p90);
  // Cost: 8 GPUs x $2 per GPU-hour over the wall time.
  EXPECT_NEAR(r.monte_carlo.cost_usd, core::to_seconds(iterations * it + checkpoints * write) / 3600.0 * 16.0, 1e-9);
}

TEST(FullRun, DefaultEnergyTakesThePresetsIdleAndNodePowerAndPue1Point58) {
  // The no-failure run of the test above: T = t_run + checkpoints, nothing lost.
  // H100 preset: P_idle 140 W, P_node 4600 W (one node); PUE 1.58. With u the
  // healthy iteration's compute utilization:
  // E = 1.58 [8 (140 + (700 - 140) u) t_run + 8 x 140 (T - t_run) + 4600 T] / 3.6e6 kWh.
  const config::Scenario s = gpt2(R"({"failures_per_1000_node_days": 0, "checkpoint_interval": "20s",
                                        "checkpoint_write_bandwidth": "10GB/s", "trials": 1})");
  const FullRunReport r = simulate_full_run(s, simulate(s));
  const faults::TrialResult& t = r.monte_carlo.per_trial.front();
  const double run = core::to_seconds(t.running);
  const double wall = core::to_seconds(t.wall);
  ASSERT_GT(wall, run);  // checkpoints stop training
  EXPECT_DOUBLE_EQ(s.cluster.gpu.idle_watts, 140.0);
  EXPECT_DOUBLE_EQ(s.cluster.gpu.node_overhead_watts, 4600.0);
  EXPECT_DOUBLE_EQ(s.cluster.pue, 1.58);
  const double u = r.gpu_utilization;
  const double expected = 1.58 * (8 * (140.0 + 560.0 * u) * run + 8 * 140.0 * (wall - run) + 4600.0 * wall) / 3.6e6;
  EXPECT_NEAR(r.monte_carlo.energy_kwh, expected, 1e-9 * expected);
  // Given in the scenario, the facility's figures replace the defaults.
  const config::Scenario own = gpt2(R"({"failures_per_1000_node_days": 0, "checkpoint_interval": "20s",
                                          "checkpoint_write_bandwidth": "10GB/s", "trials": 1,
                                          "gpu_idle_power": "0W", "node_overhead_power": "0W", "pue": 1})");
  const FullRunReport bare = simulate_full_run(own, simulate(own));
  EXPECT_NEAR(bare.monte_carlo.energy_kwh, 8 * 700.0 * u * run / 3.6e6, 1e-9 * expected);
}

TEST(FullRun, NothingFailingNorStoppingCostsTheEnergyOfTheRunWithoutFailures) {
  // One power model (hardware/power.h): with no failures and no checkpoint
  // inside the run, the replay's energy is the failure-free time to train's.
  const config::Scenario s = gpt2(R"({"failures_per_1000_node_days": 0, "checkpoint_interval": "1000d",
                                        "trials": 1})");
  const SimulationOutput out = simulate(s);
  const report::Metrics plain = report::compute_metrics(s, out);
  const FullRunReport r = simulate_full_run(s, out);
  ASSERT_TRUE(plain.energy_kwh.has_value());
  EXPECT_EQ(r.monte_carlo.per_trial.front().checkpoints, 0);
  EXPECT_NEAR(r.monte_carlo.time_to_train_s.mean, *plain.time_to_train_s, 1e-9);
  EXPECT_NEAR(r.gpu_utilization, plain.gpu_utilization, 1e-12);
  EXPECT_NEAR(r.monte_carlo.energy_kwh, *plain.energy_kwh, 1e-9 * *plain.energy_kwh);
}

TEST(FullRun, AutoIntervalIsDalysFormula) {
  const config::Scenario s = gpt2(R"({"node_mtbf": "2h", "checkpoint_write_bandwidth": "1GB/s", "trials": 2})");
  const FullRunReport r = simulate_full_run(s, simulate(s));
  ASSERT_TRUE(r.checkpoint_interval_auto);
  EXPECT_DOUBLE_EQ(r.mean_time_to_interrupt_s, 7200.0);  // one node
  const double d = r.checkpoint_size.total_bytes / 1e9;
  const double daly = std::sqrt(2 * d * 7200.0) * (1 + std::sqrt(d / 14400.0) / 3 + d / (18 * 7200.0)) - d;
  EXPECT_NEAR(r.checkpoint_interval_s, daly, 1e-9);
  EXPECT_NEAR(r.young_interval_s, std::sqrt(2 * d * 7200.0), 1e-9);
}

TEST(FullRun, StragglersOnEveryGpuRunTheWholeTrainingAtTheStragglerPace) {
  const config::Scenario s =
      gpt2(R"({"failures_per_1000_node_days": 0, "straggler_fraction": 1.0, "straggler_slowdown": 0.1, "trials": 2})");
  const SimulationOutput healthy = simulate(s);
  const FullRunReport r = simulate_full_run(s, healthy);
  SimulateOptions slow;
  slow.slow_ranks = {{0, 0.1}};
  const core::Time it = simulate(s, slow).timeline.makespan;
  EXPECT_EQ(r.states_simulated, 1);
  EXPECT_EQ(r.monte_carlo.per_trial[0].wall, r.iterations * it);
  EXPECT_DOUBLE_EQ(r.monte_carlo.stragglers, 8.0);
}

TEST(FullRun, SameSeedByteIdenticalOnOneOrManyThreads) {
  const std::string f = R"({"node_mtbf": "3h", "degraded_links_per_1000_node_days": 50000,
                            "straggler_fraction": 0.2, "trials": 16, "seed": 11, "threads": )";
  const config::Scenario one = gpt2(f + "1}", "", 1, "2e10");
  const config::Scenario many = gpt2(f + "4}", "", 1, "2e10");
  const SimulationOutput healthy = simulate(one);
  const FullRunReport a = simulate_full_run(one, healthy);
  const FullRunReport b = simulate_full_run(many, healthy);
  EXPECT_EQ(a.monte_carlo.threads, 1);
  EXPECT_EQ(b.monte_carlo.threads, 4);
  for (std::size_t i = 0; i < a.monte_carlo.per_trial.size(); ++i)
    EXPECT_EQ(a.monte_carlo.per_trial[i].wall, b.monte_carlo.per_trial[i].wall) << i;
  EXPECT_EQ(a.monte_carlo.time_to_train_s.mean, b.monte_carlo.time_to_train_s.mean);
  EXPECT_EQ(a.monte_carlo.energy_kwh, b.monte_carlo.energy_kwh);
  EXPECT_GT(a.monte_carlo.expected_interruptions, 0.0);
  EXPECT_GT(a.monte_carlo.degraded_s, 0.0);
}

TEST(FullRun, ElasticShrinkSimulatesFewerReplicas) {
  const std::string f = R"({"node_mtbf": "8h", "policy": "elastic_shrink", "repair_time": "2h", "trials": 8})";
  // Two nodes of 8 GPUs, data parallel 16: a node out takes 8 replicas with it.
  const config::Scenario s = gpt2(f, "", 2, "2e10");
  const FullRunReport r = simulate_full_run(s, simulate(s));
  EXPECT_GT(r.monte_carlo.shrunk_s, 0.0);
  EXPECT_GE(r.states_simulated, 1);
  // One node: a node out takes every replica, so the job waits for the repair instead.
  const config::Scenario single =
      gpt2(R"({"node_mtbf": "8h", "policy": "elastic_shrink", "repair_time": "30min", "trials": 8})", "", 1, "2e10");
  const FullRunReport w = simulate_full_run(single, simulate(single));
  EXPECT_EQ(w.monte_carlo.shrunk_s, 0.0);
  for (const faults::TrialResult& t : w.monte_carlo.per_trial)
    if (t.interruptions > 0) {
      // max(detection 10 min, repair 30 min) + restart 10 min, then the reload.
      EXPECT_GT(t.down, core::from_seconds(1800.0 + 600.0));
    }
}

}  // namespace
}  // namespace trainsim::exec

namespace trainsim::scenario {
namespace {

TEST(FailuresSection, DefaultsFromThePublishedSources) {
  const config::Scenario s = parse_scenario_text(
      R"({"cluster": {"gpu": "H100-SXM5-80GB", "num_nodes": 1}, "model": "gpt2-124m",
          "training": {"global_batch_size": 8, "train_tokens": "1B"}, "failures": {}})",
      "test.json");
  ASSERT_TRUE(s.failures.has_value());
  const faults::FailureConfig& f = *s.failures;
  EXPECT_FALSE(f.failures_per_1000_node_days.has_value());  // job_processes applies 6.50
  EXPECT_DOUBLE_EQ(f.checkpoint_write_bandwidth, 57.5e9);  // BLOOM: 2.3 TB in 40 s
  EXPECT_DOUBLE_EQ(f.detection_time_s, 600.0);
  EXPECT_DOUBLE_EQ(f.straggler_slowdown, 0.10);
  EXPECT_FALSE(f.checkpoint_interval_s.has_value());  // "auto"
  EXPECT_EQ(f.policy, faults::RecoveryPolicy::kHotSpare);
  EXPECT_EQ(f.trials, 100);
  // Energy: the preset's idle draw and node overhead, the Uptime Institute's 2023 average PUE.
  EXPECT_DOUBLE_EQ(s.cluster.pue, 1.58);
  EXPECT_DOUBLE_EQ(s.cluster.gpu.idle_watts, 140.0);              // nvidia-smi, gpu-burn issue #114
  EXPECT_DOUBLE_EQ(s.cluster.gpu.node_overhead_watts, 4600.0);    // DGX H100: 10.2 kW - 8 x 700 W
}

TEST(FailuresSection, UnitsAndChoices) {
  const config::Scenario s = parse_scenario_text(
      R"({"cluster": {"gpu": "H100-SXM5-80GB", "num_nodes": 1}, "model": "gpt2-124m",
          "training": {"global_batch_size": 8, "train_tokens": "1B"},
          "failures": {"gpu_mtbf": "50000h", "distribution": "weibull", "weibull_shape": 0.7,
                       "checkpoint_interval": "30min", "checkpoint_mode": "async", "host_copy_bandwidth": "64GB/s",
                       "policy": "hot_spare", "hot_spares": 2, "repair_time": "2d", "maintenance_interval": "7d",
                       "maintenance_duration": "4h", "gpu_idle_power": "80W", "node_overhead_power": "2kW",
                       "pue": 1.2, "seed": 9, "trials": 10, "threads": 1}})",
      "test.json");
  const faults::FailureConfig& f = *s.failures;
  EXPECT_DOUBLE_EQ(*f.gpu_mtbf_s, 50000.0 * 3600);
  EXPECT_EQ(f.distribution, faults::Distribution::kWeibull);
  EXPECT_DOUBLE_EQ(f.weibull_shape, 0.7);
  EXPECT_DOUBLE_EQ(*f.checkpoint_interval_s, 1800.0);
  EXPECT_EQ(f.checkpoint_mode, faults::CheckpointMode::kAsync);
  EXPECT_DOUBLE_EQ(f.host_copy_bandwidth, 64e9);
  EXPECT_EQ(*f.hot_spares, 2);
  EXPECT_DOUBLE_EQ(*f.repair_time_s, 2 * 86400.0);
  EXPECT_DOUBLE_EQ(*f.maintenance_interval_s, 7 * 86400.0);
  EXPECT_DOUBLE_EQ(f.maintenance_duration_s, 4 * 3600.0);
  // The power keys' older place: they set the cluster's figures, which every energy uses.
  EXPECT_DOUBLE_EQ(s.cluster.gpu.idle_watts, 80.0);
  EXPECT_DOUBLE_EQ(s.cluster.gpu.node_overhead_watts, 2000.0);
  EXPECT_DOUBLE_EQ(s.cluster.pue, 1.2);
  EXPECT_EQ(f.seed, 9u);
}

TEST(FailuresSection, PueGivenTwiceIsAnErrorNamingBothPlaces) {
  try {
    (void)parse_scenario_text(
        R"({"cluster": {"gpu": "H100-SXM5-80GB", "num_nodes": 1, "pue": 1.1}, "model": "gpt2-124m",
            "training": {"global_batch_size": 8, "train_tokens": "1B"}, "failures": {"pue": 1.2}})",
        "twice.json");
    FAIL() << "expected a ScenarioError";
  } catch (const ScenarioError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("twice.json"), std::string::npos) << what;
    EXPECT_NE(what.find("failures/pue"), std::string::npos) << what;
    EXPECT_NE(what.find("cluster.pue"), std::string::npos) << what;
  }
}

}  // namespace
}  // namespace trainsim::scenario
