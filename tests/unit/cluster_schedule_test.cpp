// The shared cluster's scheduler on hand-built schedules (docs/cluster.md,
// "Policies"): job paces are given, so every start and end is derived by hand.
#include <cmath>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sstream>
#include <tuple>

#include "cluster/cluster_timeline.h"
#include "cluster/schedule.h"
#include "core/rng.h"

namespace trainsim::cluster {
namespace {

// `nodes` 8-GPU nodes under one switch.
config::ClusterWorkload workload(int nodes, config::SchedulerPolicy policy) {
  config::ClusterWorkload w;
  w.cluster.num_nodes = nodes;
  w.cluster.gpus_per_node = 8;
  w.scheduler.policy = policy;
  return w;
}

void add_job(config::ClusterWorkload& w, const std::string& name, double arrival, int gpus, long long iterations,
             int priority = 0) {
  config::ClusterJob j;
  j.name = name;
  j.arrival_s = arrival;
  j.gpus = gpus;
  j.iterations = iterations;
  j.priority = priority;
  w.jobs.push_back(j);
}

// Every job at 1 s an iteration; a preemption costs a 5 s checkpoint and a 10 s restart.
JobTimer one_second() {
  JobTimer t;
  t.pace = [](std::size_t, const Placement&) { return JobPace{1.0, 1.0}; };
  t.preemption = [](std::size_t) { return PreemptionCost{5.0, 10.0, 0.0, {}}; };
  return t;
}

// A (24 GPUs, 0-100 s), then B wants all 32 GPUs at 1 s, C one node at 2 s.
config::ClusterWorkload three_jobs(config::SchedulerPolicy policy, long long c_iterations) {
  config::ClusterWorkload w = workload(4, policy);
  add_job(w, "A", 0.0, 24, 100);
  add_job(w, "B", 1.0, 32, 50);
  add_job(w, "C", 2.0, 8, c_iterations);
  return w;
}

TEST(ClusterSchedule, FifoBlocksBehindTheFirstJobThatDoesNotFit) {
  const ScheduleResult r = run_schedule(three_jobs(config::SchedulerPolicy::kFifo, 60), one_second());
  // B waits for A's end at 100 and runs to 150; C, behind B, from 150 to 210.
  EXPECT_DOUBLE_EQ(r.jobs[0].end_s, 100.0);
  EXPECT_DOUBLE_EQ(r.jobs[1].segments[0].start_s, 100.0);
  EXPECT_DOUBLE_EQ(r.jobs[1].end_s, 150.0);
  EXPECT_DOUBLE_EQ(r.jobs[2].segments[0].start_s, 150.0);
  EXPECT_DOUBLE_EQ(r.jobs[2].end_s, 210.0);
  EXPECT_DOUBLE_EQ(r.makespan_s, 210.0);
}

TEST(ClusterSchedule, EasyBackfillRunsAJobThatEndsBeforeTheReservation) {
  // B's reservation is A's end, 100 s; C (2 + 60 = 62 s) ends before it and starts at once.
  const ScheduleResult r = run_schedule(three_jobs(config::SchedulerPolicy::kBackfill, 60), one_second());
  EXPECT_DOUBLE_EQ(r.jobs[2].segments[0].start_s, 2.0);
  EXPECT_DOUBLE_EQ(r.jobs[2].end_s, 62.0);
  EXPECT_DOUBLE_EQ(r.jobs[1].segments[0].start_s, 100.0);
  EXPECT_DOUBLE_EQ(r.jobs[1].end_s, 150.0);
  EXPECT_DOUBLE_EQ(r.makespan_s, 150.0);
}

TEST(ClusterSchedule, EasyBackfillKeepsTheReservation) {
  // C of 120 s would end at 122, after B's reservation at 100, on a node B needs: it waits
  // for B (100-150) and runs 150-270.
  const ScheduleResult r = run_schedule(three_jobs(config::SchedulerPolicy::kBackfill, 120), one_second());
  EXPECT_DOUBLE_EQ(r.jobs[1].segments[0].start_s, 100.0);
  EXPECT_DOUBLE_EQ(r.jobs[2].segments[0].start_s, 150.0);
  EXPECT_DOUBLE_EQ(r.jobs[2].end_s, 270.0);
}

TEST(ClusterSchedule, EasyBackfillMayOutliveTheReservationOnGpusTheHeadDoesNotNeed) {
  // A holds 2 of 4 nodes to 100 s; B wants 3 nodes (reservation 100 s, one node to spare
  // then); C takes one node for 500 s: it ends after 100 but leaves B its 3 nodes.
  config::ClusterWorkload w = workload(4, config::SchedulerPolicy::kBackfill);
  add_job(w, "A", 0.0, 16, 100);
  add_job(w, "B", 1.0, 24, 50);
  add_job(w, "C", 2.0, 8, 500);
  const ScheduleResult r = run_schedule(w, one_second());
  EXPECT_DOUBLE_EQ(r.jobs[2].segments[0].start_s, 2.0);
  EXPECT_DOUBLE_EQ(r.jobs[1].segments[0].start_s, 100.0);
  EXPECT_DOUBLE_EQ(r.jobs[2].end_s, 502.0);
}

TEST(ClusterSchedule, PriorityPreemptsWithACheckpointAndPaysTheRestart) {
  // A (prio 0) holds all 32 GPUs from 0; U (prio 5, 16 GPUs, 20 s) arrives at 30.5 s.
  // A has done 30 iterations (0.5 s lost), writes its checkpoint to 35.5 and gives its
  // GPUs back; U runs 35.5-55.5; A restarts at 55.5: 10 s restart + 70 iterations = 135.5.
  config::ClusterWorkload w = workload(4, config::SchedulerPolicy::kPriority);
  add_job(w, "A", 0.0, 32, 100);
  add_job(w, "U", 30.5, 16, 20, 5);
  const ScheduleResult r = run_schedule(w, one_second());
  ASSERT_EQ(r.jobs[0].segments.size(), 2u);
  const Segment& first = r.jobs[0].segments[0];
  EXPECT_TRUE(first.preempted);
  EXPECT_EQ(first.iterations, 30);
  EXPECT_DOUBLE_EQ(first.train_s, 30.0);
  EXPECT_DOUBLE_EQ(first.lost_s, 0.5);
  EXPECT_DOUBLE_EQ(first.checkpoint_s, 5.0);
  EXPECT_DOUBLE_EQ(first.end_s, 35.5);
  EXPECT_DOUBLE_EQ(r.jobs[1].segments[0].start_s, 35.5);
  EXPECT_DOUBLE_EQ(r.jobs[1].end_s, 55.5);
  const Segment& second = r.jobs[0].segments[1];
  EXPECT_DOUBLE_EQ(second.start_s, 55.5);
  EXPECT_DOUBLE_EQ(second.restart_s, 10.0);
  EXPECT_EQ(second.iterations, 70);
  EXPECT_DOUBLE_EQ(r.jobs[0].end_s, 135.5);
}

TEST(ClusterSchedule, PriorityWithoutPreemptionWaits) {
  config::ClusterWorkload w = workload(4, config::SchedulerPolicy::kPriority);
  w.scheduler.preemption = false;
  add_job(w, "A", 0.0, 32, 100);
  add_job(w, "U", 30.5, 16, 20, 5);
  const ScheduleResult r = run_schedule(w, one_second());
  EXPECT_EQ(r.jobs[0].segments.size(), 1u);
  EXPECT_DOUBLE_EQ(r.jobs[1].segments[0].start_s, 100.0);
}

TEST(ClusterSchedule, PriorityOrdersTheQueue) {
  // Both wait for A; at 100 the higher priority L2 (arrived later) goes first.
  config::ClusterWorkload w = workload(2, config::SchedulerPolicy::kPriority);
  w.scheduler.preemption = false;
  add_job(w, "A", 0.0, 16, 100);
  add_job(w, "L1", 1.0, 16, 10, 1);
  add_job(w, "L2", 2.0, 16, 10, 2);
  const ScheduleResult r = run_schedule(w, one_second());
  EXPECT_DOUBLE_EQ(r.jobs[2].segments[0].start_s, 100.0);
  EXPECT_DOUBLE_EQ(r.jobs[1].segments[0].start_s, 110.0);
}

TEST(ClusterSchedule, NeighboursOnOneUplinkShareIt) {
  // Both jobs keep leaf group 0's uplinks busy all the time alone (duty 1): together
  // each gets half (E[1/(1+N)] with N = 1), and here runs at 1 / share s an iteration.
  // A alone 0-50 (50 iterations); with B from 50 at 2 s: B's 20 iterations end at 90,
  // A has done 50 + 40 / 2 = 70; alone again, its last 30 end at 120.
  config::ClusterWorkload w = workload(4, config::SchedulerPolicy::kFifo);
  add_job(w, "A", 0.0, 16, 100);
  add_job(w, "B", 50.0, 16, 20);
  JobTimer t = one_second();
  t.traffic = [](std::size_t, const Placement&) { return GroupDuty{{0, 1.0}}; };
  t.shared_pace = [](std::size_t, const Placement&, const std::map<int, double>& share) {
    return JobPace{1.0 / share.at(0), 1.0};
  };
  const ScheduleResult r = run_schedule(w, t);
  EXPECT_DOUBLE_EQ(r.jobs[1].end_s, 90.0);
  EXPECT_DOUBLE_EQ(r.jobs[0].end_s, 120.0);
  ASSERT_EQ(r.jobs[0].segments[0].pace_changes.size(), 2u);
  EXPECT_DOUBLE_EQ(r.jobs[0].segments[0].pace_changes[0].first, 50.0);
  EXPECT_DOUBLE_EQ(r.jobs[0].segments[0].pace_changes[0].second.iteration_s, 2.0);
  EXPECT_DOUBLE_EQ(r.jobs[0].segments[0].pace_changes[1].second.iteration_s, 1.0);
  // Without contention both run at 1 s.
  w.scheduler.contention = false;
  EXPECT_DOUBLE_EQ(run_schedule(w, t).jobs[0].end_s, 100.0);
}

TEST(ClusterSchedule, ExpectedShareOfAnUplink) {
  // Two neighbours always sending: a third each; one sending half the time: 1 - 1/4.
  EXPECT_DOUBLE_EQ(expected_share(std::vector<double>{1.0, 1.0}), 1.0 / 3.0);
  EXPECT_DOUBLE_EQ(expected_share(std::vector<double>{0.5}), 0.75);
  EXPECT_DOUBLE_EQ(expected_share(std::vector<double>{}), 1.0);
  EXPECT_DOUBLE_EQ(quantized_share(0.74), 24.0 / 32.0);
  EXPECT_DOUBLE_EQ(quantized_share(0.001), 1.0 / 32.0);
}

TEST(ClusterSchedule, UsageStepsFollowTheJobs) {
  const ScheduleResult r = run_schedule(three_jobs(config::SchedulerPolicy::kFifo, 60), one_second());
  // 0: A (24 busy); 1: B waits; 2: C waits too; 100: B runs (32); 150: C (8); 210: none.
  ASSERT_EQ(r.usage.size(), 6u);
  EXPECT_EQ(r.usage[0].busy_gpus, 24);
  EXPECT_EQ(r.usage[2].waiting_jobs, 2);
  EXPECT_DOUBLE_EQ(r.usage[3].time_s, 100.0);
  EXPECT_EQ(r.usage[3].busy_gpus, 32);
  EXPECT_EQ(r.usage[4].busy_gpus, 8);
  EXPECT_EQ(r.usage[5].busy_gpus, 0);
}

}  // namespace
}  // namespace trainsim::cluster

namespace trainsim::cluster {
namespace {

TEST(ClusterTimeline, JobsOverGpusWithTheirRestartsAndCheckpoints) {
  // The preemption above: A on all 32 GPUs trains 0-30.5, checkpoints to 35.5, restarts
  // 55.5-65.5 and trains to 135.5; U on the lowest 16 GPUs (nodes 0 and 1) 35.5-55.5.
  config::ClusterWorkload w = workload(4, config::SchedulerPolicy::kPriority);
  w.name = "t";
  add_job(w, "A", 0.0, 32, 100);
  add_job(w, "U", 30.5, 16, 20, 5);
  std::ostringstream os;
  write_cluster_timeline(os, w, run_schedule(w, one_second()));
  const nlohmann::json j = nlohmann::json::parse(os.str());
  ASSERT_EQ(j["lanes"].size(), 32u);
  EXPECT_EQ(j["node_of_rank"][9], 1);
  const nlohmann::json& gpu0 = j["lanes"][0]["spans"];
  ASSERT_EQ(gpu0.size(), 5u);
  const std::vector<std::tuple<std::string, std::string, double, double>> expected{
      {"A", "train", 0.0, 30.5},   {"A", "checkpoint", 30.5, 35.5}, {"U", "train", 35.5, 55.5},
      {"A", "restart", 55.5, 65.5}, {"A", "train", 65.5, 135.5}};
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(gpu0[i]["name"], std::get<0>(expected[i]));
    EXPECT_EQ(gpu0[i]["category"], std::get<1>(expected[i]));
    EXPECT_DOUBLE_EQ(gpu0[i]["start"].get<double>(), std::get<2>(expected[i]));
    EXPECT_DOUBLE_EQ(gpu0[i]["end"].get<double>(), std::get<3>(expected[i]));
  }
  EXPECT_EQ(j["lanes"][31]["spans"].size(), 4u);  // node 3: A alone
}

TEST(ClusterTimeline, SmallJobsTakeTheFreeGpusOfTheirNode) {
  config::ClusterWorkload w = workload(1, config::SchedulerPolicy::kFifo);
  add_job(w, "a", 0.0, 4, 10);
  add_job(w, "b", 1.0, 2, 10);
  add_job(w, "c", 12.0, 4, 10);  // after a ends: GPUs 0-3 again
  std::ostringstream os;
  write_cluster_timeline(os, w, run_schedule(w, one_second()));
  const nlohmann::json j = nlohmann::json::parse(os.str());
  EXPECT_EQ(j["lanes"][3]["spans"][0]["name"], "a");
  EXPECT_EQ(j["lanes"][4]["spans"][0]["name"], "b");
  EXPECT_EQ(j["lanes"][5]["spans"][0]["name"], "b");
  EXPECT_TRUE(j["lanes"][6]["spans"].empty());
  EXPECT_EQ(j["lanes"][0]["spans"][1]["name"], "c");
}

}  // namespace
}  // namespace trainsim::cluster

namespace trainsim::cluster {
namespace {

// Job 1 is elastic over 8-32 GPUs at 32 / GPUs s an iteration; the others run at 1 s.
JobTimer elastic_timer(std::size_t elastic) {
  JobTimer t = one_second();
  t.pace = [elastic](std::size_t j, const Placement& p) {
    return JobPace{j == elastic ? 32.0 / static_cast<double>(p.gpus()) : 1.0, 1.0};
  };
  return t;
}

void make_elastic(config::ClusterJob& job) {
  for (int g : {8, 16, 24, 32}) job.elastic.push_back({g, {}, {}, {}});
  job.gpus = 32;
}

TEST(ClusterElastic, GrowsIntoGpusNobodyWaitsFor) {
  // A holds 24 GPUs 0-100; E arrives at 1 and starts on the 8 left (4 s an iteration).
  // At 100 it has done 24.75 iterations: staying costs 75.25 x 4 = 301 s, growing to 32
  // GPUs 5 + 10 + 75.25 = 90.25 s; it keeps 24 (3 s lost), checkpoints to 105,
  // restarts to 115 and runs its last 76 at 1 s: 191.
  config::ClusterWorkload w = workload(4, config::SchedulerPolicy::kFifo);
  add_job(w, "A", 0.0, 24, 100);
  add_job(w, "E", 1.0, 32, 100);
  make_elastic(w.jobs[1]);
  const ScheduleResult r = run_schedule(w, elastic_timer(1));
  ASSERT_EQ(r.jobs[1].segments.size(), 2u);
  const Segment& small = r.jobs[1].segments[0];
  EXPECT_EQ(small.placement.gpus(), 8);
  EXPECT_TRUE(small.resized);
  EXPECT_EQ(small.iterations, 24);
  EXPECT_DOUBLE_EQ(small.lost_s, 3.0);
  EXPECT_DOUBLE_EQ(small.end_s, 105.0);
  EXPECT_EQ(r.jobs[1].segments[1].placement.gpus(), 32);
  EXPECT_DOUBLE_EQ(r.jobs[1].end_s, 191.0);
}

TEST(ClusterElastic, ShrinksForAHigherPriorityThenGrowsBack) {
  // E (priority 0) on all 32 GPUs from 0; U (priority 5, 16 GPUs, 20 s) at 30: E shrinks
  // to 16 (30 iterations kept, checkpoint to 35), restarts to 45 at 2 s an iteration;
  // U runs 35-55. At 55 E has done 5 more: staying 65 x 2 = 130 s, growing 5 + 10 + 65 =
  // 80 s; it checkpoints to 60, restarts to 70 and ends at 135.
  config::ClusterWorkload w = workload(4, config::SchedulerPolicy::kPriority);
  add_job(w, "E", 0.0, 32, 100);
  make_elastic(w.jobs[0]);
  add_job(w, "U", 30.0, 16, 20, 5);
  const ScheduleResult r = run_schedule(w, elastic_timer(0));
  ASSERT_EQ(r.jobs[0].segments.size(), 3u);
  EXPECT_EQ(r.jobs[0].segments[0].iterations, 30);
  EXPECT_FALSE(r.jobs[0].segments[0].preempted);
  EXPECT_EQ(r.jobs[0].segments[1].placement.gpus(), 16);
  EXPECT_EQ(r.jobs[0].segments[1].iterations, 5);
  EXPECT_DOUBLE_EQ(r.jobs[0].segments[1].end_s, 60.0);
  EXPECT_DOUBLE_EQ(r.jobs[1].segments[0].start_s, 35.0);
  EXPECT_DOUBLE_EQ(r.jobs[1].end_s, 55.0);
  EXPECT_DOUBLE_EQ(r.jobs[0].end_s, 135.0);
}

}  // namespace
}  // namespace trainsim::cluster

namespace trainsim::cluster {
namespace {

TEST(ClusterFailures, AFailedNodeCostsTheWorkSinceTheLastCheckpoint) {
  // One node, A: 1000 iterations of 1 s, checkpoints of C = 5 s every tau = 100 s of
  // training: 1.05 s an iteration. The node fails at t_f (its first exponential draw);
  // A keeps the 100 k iterations of its last checkpoint (k = floor(t_f / 105)), the node
  // is back at t_f + 50, A restarts (20 s detection + 10 s restart) and runs its
  // 1000 - 100 k iterations at 1.05 s.
  config::ClusterWorkload w = workload(1, config::SchedulerPolicy::kFifo);
  add_job(w, "A", 0.0, 8, 1000);
  w.failures = config::ClusterFailures{600.0, 50.0, 3};
  JobTimer t = one_second();
  t.preemption = [](std::size_t) {
    return PreemptionCost{5.0, 10.0, 20.0, [](int) { return 100.0; }};
  };
  core::Rng rng(3);
  const double t_f = rng.exponential(600.0);
  const double second = t_f + 50.0 + rng.exponential(600.0);
  const double k = std::floor(t_f / 105.0);
  const double end = t_f + 50.0 + 30.0 + (1000.0 - 100.0 * k) * 1.05;
  ASSERT_LT(t_f, 1050.0);   // the seed's first failure comes during the run
  ASSERT_GT(second, end);   // and the second after it
  const ScheduleResult r = run_schedule(w, t);
  ASSERT_EQ(r.jobs[0].segments.size(), 2u);
  EXPECT_TRUE(r.jobs[0].segments[0].failed);
  EXPECT_EQ(r.jobs[0].segments[0].iterations, static_cast<long long>(100 * k));
  EXPECT_NEAR(r.jobs[0].segments[0].checkpoint_share, 5.0 / 105.0, 1e-12);
  EXPECT_NEAR(r.jobs[0].segments[1].start_s, t_f + 50.0, 1e-9);
  EXPECT_DOUBLE_EQ(r.jobs[0].segments[1].restart_s, 30.0);
  EXPECT_NEAR(r.jobs[0].end_s, end, 1e-6);
  ASSERT_EQ(r.outages.size(), 1u);
  EXPECT_NEAR(r.outages[0].to_s - r.outages[0].from_s, 50.0, 1e-9);
}

}  // namespace
}  // namespace trainsim::cluster
