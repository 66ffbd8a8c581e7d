// The faults module on its own (docs/reliability.md): checkpoint size, Young and
// Daly by hand, job failure processes, and the full-run replay against closed
// forms, with a fake iteration oracle (no iteration simulator involved).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <vector>

#include "faults/checkpoint.h"
#include "faults/replay.h"

namespace trainsim::faults {
namespace {

TEST(CheckpointSize, ModelStatesShardedByZero) {
  // 1e9 parameters, bf16 weights (2 B) and Adam with an fp32 master copy (12 B).
  CheckpointInputs in{1e9, 2.0, 12.0, 2, 2, 4, 1};
  const CheckpointSize s = checkpoint_size(in);
  EXPECT_DOUBLE_EQ(s.total_bytes, 14e9);
  // Weights split t p = 4 ways: 0.5 GB; ZeRO-1 splits the 12 GB of states t p d = 16 ways: 0.75 GB.
  EXPECT_DOUBLE_EQ(s.per_gpu_bytes, 1.25e9);
  in.zero_stage = 0;
  EXPECT_DOUBLE_EQ(checkpoint_size(in).per_gpu_bytes, 3.5e9);
  in.zero_stage = 3;
  EXPECT_DOUBLE_EQ(checkpoint_size(in).per_gpu_bytes, 14e9 / 16);
}

TEST(CheckpointSize, BloomCheckpointIsAboutItsPublished2Point3TB) {
  // BLOOM-176B saved 2.3 TB (shared/validation/PUBLIC_DATA.md section 4): 176e9 x 14 B = 2.464e12 B.
  const CheckpointSize s = checkpoint_size({176e9, 2.0, 12.0, 4, 12, 8, 1});
  EXPECT_NEAR(s.total_bytes / 2.3e12, 1.0, 0.08);
}

TEST(CheckpointCost, BlockingAndAsync) {
  FailureConfig f;
  f.checkpoint_write_bandwidth = 10e9;
  f.checkpoint_read_bandwidth = 20e9;
  const CheckpointSize size{100e9, 2e9};
  const CheckpointCost b = checkpoint_cost(size, f);
  EXPECT_DOUBLE_EQ(b.blocking_s, 10.0);
  EXPECT_DOUBLE_EQ(b.background_write_s, 0.0);
  EXPECT_DOUBLE_EQ(b.reload_s, 5.0);
  f.checkpoint_mode = CheckpointMode::kAsync;
  f.host_copy_bandwidth = 25e9;
  const CheckpointCost a = checkpoint_cost(size, f);
  EXPECT_DOUBLE_EQ(a.blocking_s, 2e9 / 25e9);
  EXPECT_DOUBLE_EQ(a.background_write_s, 10.0);
}

TEST(CheckpointInterval, YoungAndDalyByHand) {
  // d = 60 s, M = 1 h: sqrt(2 x 60 x 3600) = 657.26707 s;
  // Daly: 657.26707 x (1 + sqrt(60/7200)/3 + 60/64800) - 60 = 617.87565 s.
  EXPECT_NEAR(young_interval(60.0, 3600.0), 657.2670690062, 1e-9);
  EXPECT_NEAR(daly_interval(60.0, 3600.0), 617.8756496256, 1e-9);
  // d >= 2M: checkpoint every M.
  EXPECT_DOUBLE_EQ(daly_interval(8000.0, 3600.0), 3600.0);
}

TEST(FailureProcesses, DefaultRateGivesThePublished1Point8HoursAt16384Gpus) {
  // 6.50 failures per 1000 node-days on 2048 nodes: 1000 / 6.5 / 2048 days = 6490.38 s = 1.80 h.
  const std::vector<JobProcess> p = job_processes(FailureConfig{}, 16384, 2048, 16384, 0);
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].component, Component::kNode);
  EXPECT_NEAR(p[0].mean_s, 6490.384615384615, 1e-6);
  EXPECT_NEAR(mean_time_to_interrupt(p) / 3600.0, 1.80, 0.005);
}

TEST(FailureProcesses, ComponentsAddAsRates) {
  FailureConfig f;
  f.gpu_mtbf_s = 50000.0 * 3600;  // 1000 GPUs: job MTBF 50 h
  f.link_mtbf_s = 25000.0 * 3600;  // 500 links: 50 h
  const std::vector<JobProcess> p = job_processes(f, 1000, 125, 500, 10);
  ASSERT_EQ(p.size(), 2u);  // no default node rate once a component is given
  EXPECT_DOUBLE_EQ(p[0].mean_s, 50.0 * 3600);
  EXPECT_DOUBLE_EQ(p[1].mean_s, 50.0 * 3600);
  EXPECT_DOUBLE_EQ(mean_time_to_interrupt(p), 25.0 * 3600);
}

// A cluster whose iteration takes 1.000000007 s and trains 1000 tokens.
constexpr core::Time kIteration = 1'000'000'007;
StatePerformance fixed(const ClusterState&) { return {kIteration, 1000}; }

ReplayConfig no_failures() {
  ReplayConfig c;
  c.train_tokens = 1'000'500;  // 1001 iterations, the last one partly needed
  c.checkpoint_interval = core::from_seconds(100.5);
  c.checkpoint_blocking = core::from_seconds(2.5);
  c.reload = core::from_seconds(7.0);
  return c;
}

TEST(Replay, NoFailuresIsIterationsTimesIterationTimePlusCheckpoints) {
  const ReplayConfig c = no_failures();
  const TrialResult r = replay_trial(c, fixed, 1, 0, true);
  // A checkpoint every ceil(100.5 s / 1.000000007 s) = 101 iterations, none
  // after the last: floor((1001 - 1) / 101) = 9 of them.
  EXPECT_EQ(r.iterations, 1001);
  EXPECT_EQ(r.checkpoints, 9);
  EXPECT_EQ(r.wall, 1001 * kIteration + 9 * core::from_seconds(2.5));
  EXPECT_EQ(r.interruptions, 0);
  EXPECT_EQ(r.lost_work, 0);
  EXPECT_EQ(r.down, 0);
  // Events: 10 training spans between 9 checkpoints.
  ASSERT_EQ(r.events.size(), 19u);
  EXPECT_EQ(r.events[1].category, "checkpoint");
  EXPECT_EQ(r.events[1].start, 101 * kIteration);
}

TEST(Replay, NoFailuresAsyncCheckpointStallsOnlyForTheCopy) {
  ReplayConfig c = no_failures();
  c.checkpoint_blocking = core::from_seconds(0.25);    // copy to host memory
  c.checkpoint_background = core::from_seconds(30.0);  // storage write, shorter than the interval
  const TrialResult r = replay_trial(c, fixed, 1, 0, false);
  EXPECT_EQ(r.wall, 1001 * kIteration + 9 * core::from_seconds(0.25));
}

TEST(Replay, EnergyAndCostByHand) {
  ReplayConfig c = no_failures();
  c.power = {.running_w = 1000.0, .idle_w = 100.0, .constant_w = 50.0};
  c.pue = 1.2;
  c.allocated_gpus = 8;
  c.price_per_gpu_hour = 2.0;
  const TrialResult r = replay_trial(c, fixed, 1, 0, false);
  const double run = 1001 * 1.000000007;
  const double stopped = 9 * 2.5;
  const double wall = run + stopped;
  EXPECT_NEAR(r.energy_kwh, 1.2 * (1000.0 * run + 100.0 * stopped + 50.0 * wall) / 3.6e6, 1e-12);
  EXPECT_NEAR(r.cost_usd, wall / 3600.0 * 8 * 2.0, 1e-9);
}

// 1000 GPUs of MTBF 1000 h: the job fails every hour; about 100 h of training.
ReplayConfig hourly_failures() {
  ReplayConfig c;
  c.train_tokens = 36'000'000;  // 36000 iterations of 10 s = 100 h
  c.processes = {{Component::kGpu, 1000.0 * 3600 / 1000}};
  c.detection = core::from_seconds(60.0);
  c.restart = core::from_seconds(120.0);
  c.reload = core::from_seconds(30.0);
  c.checkpoint_interval = core::from_seconds(600.0);
  c.checkpoint_blocking = core::from_seconds(20.0);
  return c;
}
StatePerformance ten_seconds(const ClusterState&) { return {10 * core::kSecond, 1000}; }

TEST(Replay, MeanInterruptionsMatchPoissonWithinThreeStandardErrors) {
  // Failures are a Poisson process of rate N / MTBF in wall-clock time; the run
  // ends at a stopping time T, so E[count] = N E[T] / MTBF (Wald). Per trial,
  // x = count - N T / MTBF has mean 0: its mean is within 3 standard errors.
  const ReplayConfig c = hourly_failures();
  const MonteCarloResult mc = monte_carlo(c, ten_seconds, 42, 400, 2);
  double sum = 0.0, sq = 0.0;
  for (const TrialResult& r : mc.per_trial) {
    const double x = static_cast<double>(r.interruptions) - core::to_seconds(r.wall) / 3600.0;
    sum += x;
    sq += x * x;
  }
  const double n = 400.0;
  const double mean = sum / n;
  const double se = std::sqrt((sq / n - mean * mean) / (n - 1));
  EXPECT_LT(std::abs(mean), 3.0 * se) << "mean " << mean << " se " << se;
  // And the headline: expected interruptions vs N T / MTBF with T the mean wall time.
  EXPECT_NEAR(mc.expected_interruptions, mc.time_to_train_s.mean / 3600.0,
              3.0 * mc.interruptions_standard_error + 3.0 * se);
  EXPECT_GT(mc.expected_interruptions, 100.0);
  EXPECT_LT(mc.goodput, 1.0);
  EXPECT_GT(mc.lost_work_s, 0.0);
}

TEST(Replay, SameSeedSameResultOnAnyNumberOfThreads) {
  ReplayConfig c = hourly_failures();
  c.straggler_fraction = 0.01;
  c.straggler_slowdown = 0.1;
  c.num_gpus = 1000;
  c.degraded_mean_s = 7200.0;
  c.degraded_duration = core::from_seconds(1800.0);
  const IterationOracle oracle = [](const ClusterState& s) {
    core::Time t = 10 * core::kSecond;
    if (!s.slow_ranks.empty()) t += core::kSecond;
    if (s.degraded_link) t += 2 * core::kSecond;
    return StatePerformance{t, 1000};
  };
  const MonteCarloResult one = monte_carlo(c, oracle, 7, 24, 1);
  std::vector<double> fractions;  // called one at a time: no lock needed here
  const MonteCarloResult four = monte_carlo(c, oracle, 7, 24, 4, [&](double f) { fractions.push_back(f); });
  ASSERT_EQ(fractions.size(), 24u);  // once per trial, in the order they finish
  for (std::size_t i = 0; i < fractions.size(); ++i) EXPECT_DOUBLE_EQ(fractions[i], static_cast<double>(i + 1) / 24.0) << i;
  ASSERT_EQ(one.per_trial.size(), four.per_trial.size());
  for (std::size_t i = 0; i < one.per_trial.size(); ++i) {
    EXPECT_EQ(one.per_trial[i].wall, four.per_trial[i].wall) << i;
    EXPECT_EQ(one.per_trial[i].interruptions, four.per_trial[i].interruptions) << i;
    EXPECT_EQ(one.per_trial[i].energy_kwh, four.per_trial[i].energy_kwh) << i;
  }
  EXPECT_EQ(one.time_to_train_s.p50, four.time_to_train_s.p50);
  EXPECT_EQ(one.time_to_train_s.mean, four.time_to_train_s.mean);
  EXPECT_EQ(one.expected_interruptions, four.expected_interruptions);
  EXPECT_EQ(one.goodput, four.goodput);
  EXPECT_EQ(one.energy_kwh, four.energy_kwh);
  EXPECT_GT(one.degraded_s, 0.0);
  EXPECT_GT(one.stragglers, 0.0);
  const MonteCarloResult other = monte_carlo(c, oracle, 8, 24, 4);
  EXPECT_NE(one.time_to_train_s.mean, other.time_to_train_s.mean);
}

TEST(Replay, StoppedEarlyItIsTheRunOfTheTrialsThatRan) {
  const ReplayConfig c = hourly_failures();
  for (int threads : {1, 3}) {
    std::atomic<int> finished{0};
    const MonteCarloResult stopped = monte_carlo(
        c, ten_seconds, 7, 40, threads, [&](double) { ++finished; }, [&] { return finished.load() >= 9; });
    EXPECT_EQ(stopped.trials_requested, 40);
    EXPECT_GE(stopped.trials, 9);  // the stop comes once 9 have ended; the running ones end too
    EXPECT_LE(stopped.trials, 9 + threads);
    // Trials start in order and all that start end: the first K, as a run of K trials.
    const MonteCarloResult k = monte_carlo(c, ten_seconds, 7, stopped.trials, 1);
    EXPECT_EQ(k.trials_requested, k.trials);
    EXPECT_EQ(stopped.time_to_train_s.mean, k.time_to_train_s.mean) << threads;
    EXPECT_EQ(stopped.time_to_train_s.p90, k.time_to_train_s.p90) << threads;
    EXPECT_EQ(stopped.expected_interruptions, k.expected_interruptions) << threads;
    EXPECT_EQ(stopped.goodput, k.goodput) << threads;
  }
  const MonteCarloResult none = monte_carlo(c, ten_seconds, 7, 40, 2, {}, [] { return true; });
  EXPECT_EQ(none.trials, 0);
  EXPECT_EQ(none.trials_requested, 40);
}

TEST(Replay, WaitForRepairCostsTheRepairTimeEveryFailure) {
  ReplayConfig c = hourly_failures();
  const TrialResult spare = replay_trial(c, ten_seconds, 3, 0, false);
  c.policy = RecoveryPolicy::kWaitForRepair;
  c.repair = core::from_seconds(600.0);
  const TrialResult wait = replay_trial(c, ten_seconds, 3, 0, true);
  // The same failure times until the runs diverge: waiting only adds downtime.
  EXPECT_GT(wait.wall, spare.wall);
  // Each recovery (failures during one restart it again) is down at least
  // repair + restart + reload = 600 + 120 + 30 s.
  long long recoveries = 0;
  for (const Event& e : wait.events) recoveries += e.category == "restart" ? 1 : 0;
  EXPECT_GT(recoveries, 50);
  EXPECT_LE(recoveries, wait.interruptions);
  EXPECT_GE(wait.down, recoveries * core::from_seconds(600.0 + 120.0 + 30.0));
}

TEST(Replay, ElasticShrinkRunsOnFewerReplicasUntilRepaired) {
  ReplayConfig c = hourly_failures();
  c.policy = RecoveryPolicy::kElasticShrink;
  c.repair = core::from_seconds(4 * 3600.0);
  c.data_parallel = 8;
  const IterationOracle oracle = [](const ClusterState& s) {
    // One replica of 8 out: 7/8 of the tokens per iteration.
    return StatePerformance{10 * core::kSecond, 1000 - 125LL * s.lost_replicas};
  };
  const TrialResult r = replay_trial(c, oracle, 5, 0, true);
  EXPECT_GT(r.shrunk, 0);
  EXPECT_GT(r.interruptions, 50);
  bool rejoined = false;
  for (const Event& e : r.events) rejoined |= e.name == "repaired nodes rejoin";
  EXPECT_TRUE(rejoined);
}

TEST(Replay, ElasticShrinkKeepsRepairedNodesWhenTheirRejoinIsInterrupted) {
  // 64 replicas, a failure an hour, 4 h repairs, a 30 min restart that failures
  // often interrupt (one in two: 1 - exp(-0.5) = 39%). Every node out is being
  // repaired or waits for the next checkpoint to rejoin, so about 4 to 5 are out
  // at a time (4 h of repair plus the wait for a checkpoint, at one failure an
  // hour). If an interrupted rejoin forgot its repaired nodes they would never
  // come back, and over 1000 h the job would shrink to its last replica.
  ReplayConfig c = hourly_failures();
  c.train_tokens = 360'000'000;  // 1000 h of iterations
  c.policy = RecoveryPolicy::kElasticShrink;
  c.repair = core::from_seconds(4 * 3600.0);
  c.restart = core::from_seconds(1800.0);
  c.data_parallel = 64;
  int most_out = 0;
  const IterationOracle oracle = [&](const ClusterState& s) {
    most_out = std::max(most_out, s.lost_replicas);
    return StatePerformance{10 * core::kSecond, 1000 - 15LL * s.lost_replicas};
  };
  const TrialResult r = replay_trial(c, oracle, 7, 0, false);
  EXPECT_GT(r.interruptions, 1000);
  EXPECT_GE(most_out, 4);
  EXPECT_LT(most_out, 32);
}

TEST(Replay, RecoveryThatFailuresKeepStartingAgainThrowsInsteadOfHanging) {
  // Waiting 48 h for a repair with a failure every hour: the recovery almost
  // never completes (exp(-48) per attempt); the horizon stops it.
  ReplayConfig c = hourly_failures();
  c.policy = RecoveryPolicy::kWaitForRepair;
  c.repair = core::from_seconds(48 * 3600.0);
  c.horizon = core::from_seconds(365 * 86400.0);
  EXPECT_THROW(replay_trial(c, ten_seconds, 1, 0, false), std::runtime_error);
}

TEST(Replay, MaintenanceStopsWithoutLosingWork) {
  ReplayConfig c = no_failures();
  c.maintenance_interval = core::from_seconds(300.0);
  c.maintenance_duration = core::from_seconds(60.0);
  c.restart = core::from_seconds(10.0);
  const TrialResult r = replay_trial(c, fixed, 1, 0, false);
  // About 1001 s of training: stops at 300, 600, 900 s of wall time and later.
  EXPECT_GE(r.maintenance_stops, 3);
  EXPECT_EQ(r.lost_work, 0);
  EXPECT_EQ(r.iterations, 1001);
}

TEST(Replay, RunThatCannotFinishThrows) {
  ReplayConfig c = hourly_failures();
  c.processes = {{Component::kNode, 100.0}};  // a failure every 100 s, recovery takes 210 s
  c.horizon = core::from_seconds(30 * 86400.0);
  EXPECT_THROW(replay_trial(c, ten_seconds, 1, 0, false), std::runtime_error);
}

}  // namespace
}  // namespace trainsim::faults
