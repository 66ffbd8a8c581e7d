// Asynchronous training: the parameter-server replay against hand-derived cycles,
// server-bound rates and staleness, the traffic per step, and local SGD's mean
// step (docs/model.md, "Asynchronous training").
#include <gtest/gtest.h>

#include <string>

#include "core/time.h"
#include "execution/async_replay.h"
#include "execution/simulate.h"
#include "report/metrics.h"
#include "scenario/errors.h"
#include "test_scenarios.h"
#include "workload/parameters.h"

namespace trainsim {
namespace {

constexpr core::Time kMs = 1'000'000;  // ns

exec::AsyncPsInputs inputs(int workers, int staleness, core::Time step, core::Time push, core::Time server_push) {
  exec::AsyncPsInputs in;
  in.workers = workers;
  in.staleness_bound = staleness;
  in.step = step;
  in.push = push;
  in.server_push = server_push;
  return in;
}

TEST(AsyncReplay, OneWorkerCyclesThroughStepPushAndPull) {
  // Step 10 ms; the push ends when the server has it (2 ms > the 1 ms transfer);
  // the pull ends when it arrives (1 ms > the server's 0.5 ms): 13 ms a cycle.
  exec::AsyncPsInputs in = inputs(1, 0, 10 * kMs, 1 * kMs, 2 * kMs);
  in.pull = 1 * kMs;
  in.server_pull = kMs / 2;
  const exec::AsyncPsReport r = exec::replay_async_ps(in);
  EXPECT_NEAR(r.step_time_s, 0.013, 1e-12);
  EXPECT_NEAR(r.updates_per_s, 1.0 / 0.013, 1e-6);
  EXPECT_EQ(r.max_staleness, 0);
}

TEST(AsyncReplay, WorkersStaggerBehindTheServerAndSeeDMinusOneUpdates) {
  // 4 workers, 10 ms steps, a 1 ms push that the server holds 1 ms: after the
  // first round they arrive 1 ms apart and never queue, so each cycles in 11 ms.
  // Pulling before every step, a worker's update lands on parameters that miss
  // the other 3 workers' updates since its pull: staleness d - 1 = 3.
  const exec::AsyncPsReport r = exec::replay_async_ps(inputs(4, 0, 10 * kMs, 1 * kMs, 1 * kMs));
  EXPECT_NEAR(r.step_time_s, 0.011, 1e-12);
  EXPECT_NEAR(r.updates_per_s, 4 / 0.011, 1e-6);
  EXPECT_EQ(r.staleness.size(), 1U);
  EXPECT_EQ(r.staleness.begin()->first, 3);
  EXPECT_NEAR(r.server_utilization, 4 / 0.011 * 0.001, 1e-9);
}

TEST(AsyncReplay, PullingBesideTheNextStepAddsOneRoundOfStaleness) {
  // Staleness bound 1: the next step starts on the parameters pulled one step
  // earlier, so the update misses 2d - 1 = 7 others; the cycle is unchanged.
  const exec::AsyncPsReport r = exec::replay_async_ps(inputs(4, 1, 10 * kMs, 1 * kMs, 1 * kMs));
  EXPECT_NEAR(r.step_time_s, 0.011, 1e-12);
  EXPECT_EQ(r.staleness.size(), 1U);
  EXPECT_EQ(r.staleness.begin()->first, 7);
}

TEST(AsyncReplay, ASaturatedServerSetsTheRate) {
  // 10 workers each asking 2 ms of the server per 10 ms step: the server is busy
  // all the time, 500 updates/s, and every worker steps once per 10 x 2 ms.
  const exec::AsyncPsReport r = exec::replay_async_ps(inputs(10, 0, 10 * kMs, 0, 2 * kMs));
  EXPECT_NEAR(r.updates_per_s, 500.0, 1e-6);
  EXPECT_NEAR(r.step_time_s, 0.020, 1e-12);
  EXPECT_DOUBLE_EQ(r.server_utilization, 1.0);
}

TEST(AsyncReplay, AStragglerSlowsOnlyItself) {
  // One of 4 workers steps 10% slower (11 ms): with a loose staleness bound the
  // others keep their 11 ms cycle; it cycles in 12 ms.
  exec::AsyncPsInputs in = inputs(4, 100, 10 * kMs, 1 * kMs, kMs / 10);
  in.slowdown = {1.0, 1.0, 1.0, 1.1};
  const exec::AsyncPsReport r = exec::replay_async_ps(in);
  EXPECT_NEAR(r.updates_per_s, 3 / 0.011 + 1 / 0.012, 1e-3);
}

TEST(AsyncReplay, RejectsImpossibleInputs) {
  EXPECT_THROW(exec::replay_async_ps(inputs(0, 0, kMs, 0, 0)), std::invalid_argument);
  exec::AsyncPsInputs in = inputs(2, 0, kMs, 0, 0);
  in.slowdown = {1.0};
  EXPECT_THROW(exec::replay_async_ps(in), std::invalid_argument);
}

const std::string kModel = R"({"num_layers": 2, "hidden_size": 1024, "num_attention_heads": 8,
                                "seq_length": 512, "vocab_size": 32000})";

TEST(AsyncParameterServer, EachStepPushesGradientsAndPullsWeightsOneSthToEachServer) {
  const auto s = testing::make_scenario(kModel, "",
                                        R"("mode": "async_ps", "num_servers": 4, "server_placement": "dedicated")",
                                        2);
  const exec::SimulationOutput out = exec::simulate(s);
  ASSERT_TRUE(out.async.async_ps);
  const exec::AsyncPsResult& r = *out.async.async_ps;
  const double p = workload::count_parameters(s.model).total;
  EXPECT_DOUBLE_EQ(r.bytes_per_server_push, p * 4 / 4);  // fp32 gradients (bf16 training)
  EXPECT_DOUBLE_EQ(r.bytes_per_server_pull, p * 2 / 4);  // bf16 weights
  EXPECT_EQ(r.inputs.workers, 16);
  // The worker's push in the task graph: every gradient, a quarter to each server.
  double pushed = 0.0;
  int pairs = 0;
  for (const workload::Task& t : out.iteration.graph.tasks()) {
    const workload::Work& w = out.iteration.graph.work(t);
    if (w.name.starts_with("ps_push")) {
      pushed += w.collective->bytes;
      pairs = static_cast<int>(w.collective->group.members->size());
    }
  }
  EXPECT_NEAR(pushed * 4, p * 4, p * 1e-12);
  EXPECT_EQ(pairs, 4);
  // A dedicated server node has 8 NICs of 400 Gb/s at the preset's efficiency.
  EXPECT_DOUBLE_EQ(r.server_bandwidth, 8 * s.cluster.inter_node.nic_bandwidth *
                                           s.cluster.inter_node.bandwidth_efficiency);
  const report::Metrics m = report::compute_metrics(s, out);
  EXPECT_DOUBLE_EQ(m.iteration_time_s, 16 / r.report.updates_per_s);
}

TEST(LocalSgd, MeanStepSpreadsOneAverageOverThePeriod) {
  const auto s = testing::make_scenario(kModel, "", R"("mode": "local_sgd", "sync_period": 8)");
  const exec::SimulationOutput out = exec::simulate(s);
  ASSERT_TRUE(out.async.local_sgd);
  const exec::LocalSgdResult& l = *out.async.local_sgd;
  EXPECT_GT(l.averaged_step, l.plain_step);
  const report::Metrics m = report::compute_metrics(s, out);
  EXPECT_DOUBLE_EQ(m.iteration_time_s, (7 * core::to_seconds(l.plain_step) + core::to_seconds(l.averaged_step)) / 8);
  // The average moves every fp32 master weight once, over the 8 replicas.
  const double p = workload::count_parameters(s.model).total;
  bool seen = false;
  for (const workload::Task& t : out.iteration.graph.tasks()) {
    const workload::Work& w = out.iteration.graph.work(t);
    if (w.name == "param_average") {
      seen = true;
      EXPECT_DOUBLE_EQ(w.collective->bytes, p * 4);
      EXPECT_EQ(w.collective->group.size, 8);
    }
  }
  EXPECT_TRUE(seen);
}

TEST(AsyncModes, KeysOfAnotherModeAreNamed) {
  const auto fails = [](const std::string& parallelism, const std::string& path, const std::string& words) {
    try {
      testing::make_scenario(kModel, "", parallelism);
      ADD_FAILURE() << parallelism << " was accepted";
    } catch (const scenario::ScenarioError& e) {
      EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
  };
  fails(R"("staleness": 2)", "/parallelism/staleness", R"(applies to "mode": "async_ps" only)");
  fails(R"("mode": "async_ps", "sync_period": 2)", "/parallelism/sync_period", "local_sgd");
  fails(R"("mode": "local_sgd", "zero_stage": 1)", "/parallelism/zero_stage", "has none");
  fails(R"("mode": "async_ps", "num_servers": 9)", "/parallelism/num_servers", "at most one per GPU");
}

}  // namespace
}  // namespace trainsim
