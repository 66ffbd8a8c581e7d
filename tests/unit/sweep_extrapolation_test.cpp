// The sweep's micro-batch extrapolation (docs/sweep.md, "Speed"): the counts of
// the three short runs by hand; for points in the steady state (no pipeline,
// 1F1B on 4 stages, interleaved, overlapped gradient reduction, ZeRO-1,
// recomputation, the flow model) the extrapolated times, rates and memory equal
// the full simulation's; a point with too few micro-batches, or whose times do
// not grow linearly, is simulated in full; one whose growth differs over the
// first step only takes a fourth run.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/time.h"
#include "scenario/errors.h"
#include "scenario/sweep_spec_reader.h"
#include "sweep/evaluate.h"
#include "sweep/microbatch_extrapolation.h"
#include "sweep/space.h"
#include "workload/parallel_config.h"

namespace trainsim::sweep {
namespace {

using config::SweepSpec;
using scenario::parse_sweep_spec;

// A 4-layer model with 4 heads on one 8-GPU A100 node.
std::string spec_text(const std::string& space, long long global_batch, const std::string& extra = "") {
  return R"({"name": "tiny", "model": {"num_layers": 4, "hidden_size": 256, "ffn_hidden_size": 1024,
             "num_attention_heads": 4, "num_query_groups": 4, "seq_length": 128, "vocab_size": 1000},
     "training": {"global_batch_size": )" +
         std::to_string(global_batch) + R"(, "train_tokens": 1e9},
     "clusters": [{"name": "one node", "gpu": "A100-SXM4-80GB", "num_nodes": 1, "price_per_gpu_hour": 2.0}],
     "space": )" + space + extra + "}";
}

// The one point of a space of single values. Without the preset's slowdown of
// compute beside communication (docs/model.md, "Compute beside communication"),
// under which the steady state drifts by nanoseconds from one micro-batch to the
// next and the extrapolation declines (ComputeSlowedBesideCommunicationIsSimulatedInFull).
config::Scenario only_point(const std::string& space, long long global_batch, bool overlap_slowdown = false) {
  const SweepSpec spec = parse_sweep_spec(spec_text(space, global_batch), "tiny.json");
  const Enumeration e = enumerate(spec);
  EXPECT_EQ(e.candidates.size(), 1u) << space;
  config::Scenario s = scenario_of(spec, e.candidates.at(0));
  if (!overlap_slowdown) s.cluster.gpu.overlap_compute_slowdown = s.cluster.gpu.overlap_memory_slowdown = 0.0;
  return s;
}

void expect_same(double extrapolated, double full, const std::string& key) {
  EXPECT_NEAR(extrapolated, full, 1e-9 * std::abs(full)) << key;
}

// Every key time_point() fills, extrapolated against simulated in full.
void expect_equal_to_full(const config::Scenario& s) {
  SCOPED_TRACE(s.name);
  PointResult full;
  time_point(s, full);
  PointResult x;
  ASSERT_TRUE(extrapolate_microbatches(s, time_point, x));
  EXPECT_EQ(x.status, Status::kEvaluated);
  // Whole nanoseconds along an exact line: bit for bit the full simulation's.
  EXPECT_EQ(x.iteration_time_s, full.iteration_time_s);
  expect_same(x.breakdown_s.compute, full.breakdown_s.compute, "compute");
  expect_same(x.breakdown_s.exposed_communication, full.breakdown_s.exposed_communication, "exposed");
  expect_same(x.breakdown_s.pipeline_bubble, full.breakdown_s.pipeline_bubble, "bubble");
  expect_same(x.breakdown_s.optimizer, full.breakdown_s.optimizer, "optimizer");
  expect_same(x.breakdown_s.other, full.breakdown_s.other, "other");
  expect_same(x.exposed_tp_s, full.exposed_tp_s, "exposed_tp_s");
  expect_same(x.exposed_dp_s, full.exposed_dp_s, "exposed_dp_s");
  expect_same(x.exposed_pp_s, full.exposed_pp_s, "exposed_pp_s");
  expect_same(x.recompute_s, full.recompute_s, "recompute_s");
  expect_same(x.tokens_per_s, full.tokens_per_s, "tokens_per_s");
  expect_same(x.model_flops_per_iteration, full.model_flops_per_iteration, "model_flops_per_iteration");
  expect_same(x.tflops_per_gpu, full.tflops_per_gpu, "tflops_per_gpu");
  expect_same(x.mfu, full.mfu, "mfu");
  ASSERT_TRUE(x.time_to_train_s && x.cost_usd && x.energy_kwh);
  expect_same(*x.time_to_train_s, *full.time_to_train_s, "time_to_train_s");
  expect_same(*x.cost_usd, *full.cost_usd, "cost_usd");
  expect_same(*x.energy_kwh, *full.energy_kwh, "energy_kwh");
  EXPECT_EQ(x.peak_bytes_per_gpu, full.peak_bytes_per_gpu);
}

TEST(SweepExtrapolation, CountsOfTheShortRunsByHand) {
  using Counts = std::array<long long, 3>;
  // No pipeline, 16 micro-batches (128 / 8 replicas): from 2 (at least 2), in steps of 1.
  EXPECT_EQ(extrapolation_counts(only_point(R"({"tp": 1, "pp": 1})", 128)), (Counts{2, 3, 4}));
  // 4 stages, 32 micro-batches (64 / 2): from 4 x 1, in steps of pp = 4.
  EXPECT_EQ(extrapolation_counts(only_point(R"({"tp": 1, "pp": 4})", 64)), (Counts{4, 8, 12}));
  // 31 micro-batches (62 / 2): the least count >= 4 equal to 31 modulo 4 is 7.
  EXPECT_EQ(extrapolation_counts(only_point(R"({"tp": 1, "pp": 4})", 62)), (Counts{7, 11, 15}));
  // Interleaved, 2 stages of 2 chunks, 32 micro-batches (128 / 4): from 2 x 2, in steps of 2.
  EXPECT_EQ(extrapolation_counts(only_point(R"({"tp": 1, "pp": 2, "vpp": 1})", 128)), (Counts{4, 6, 8}));
  // 4 stages with 16 micro-batches (32 / 2): 16 < 2 x 12, too few to gain.
  EXPECT_EQ(extrapolation_counts(only_point(R"({"tp": 1, "pp": 4})", 32)), std::nullopt);
  // 24 = 2 x 12 is enough.
  EXPECT_EQ(extrapolation_counts(only_point(R"({"tp": 1, "pp": 4})", 48)), (Counts{4, 8, 12}));
  // The asynchronous modes: their step time comes from a replay, not the timeline.
  config::Scenario async = only_point(R"({"tp": 1, "pp": 1})", 128);
  async.parallel.mode = workload::TrainingMode::kAsyncPs;
  EXPECT_EQ(extrapolation_counts(async), std::nullopt);
}

TEST(SweepExtrapolation, NoPipelineEqualsTheFullSimulation) {
  expect_equal_to_full(only_point(R"({"tp": 1, "pp": 1})", 128));
}

TEST(SweepExtrapolation, OneFOneBOnFourStagesEqualsTheFullSimulation) {
  expect_equal_to_full(only_point(R"({"tp": 1, "pp": 4, "recompute_granularity": "full"})", 64));
}

TEST(SweepExtrapolation, InterleavedEqualsTheFullSimulation) {
  expect_equal_to_full(only_point(R"({"tp": 1, "pp": 2, "vpp": 1})", 128));
}

TEST(SweepExtrapolation, OverlappedGradientReductionEqualsTheFullSimulation) {
  expect_equal_to_full(only_point(R"({"tp": 1, "pp": 2, "overlap_grad_reduce": true})", 128));
}

TEST(SweepExtrapolation, ZeroOneWithTensorParallelismEqualsTheFullSimulation) {
  expect_equal_to_full(
      only_point(R"({"tp": 2, "pp": 1, "zero_stage": 1, "sequence_parallel": true, "overlap_param_gather": true})", 64));
}

TEST(SweepExtrapolation, FlowModelEqualsTheFullSimulation) {
  expect_equal_to_full(only_point(R"({"tp": 2, "pp": 2, "overlap_grad_reduce": true, "network_model": "flow"})", 64));
}

TEST(SweepExtrapolation, ComputeSlowedBesideCommunicationIsSimulatedInFull) {
  // 1F1B on 4 stages with the A100 preset's slowdown (0.189): the sends beside
  // the compute shift it by a few nanoseconds more each micro-batch (93,833 ns,
  // then 93,855 and 93,864 from one short run to the next), so the times are not on a
  // line and the extrapolation declines: the sweep simulates the point in full.
  const config::Scenario s = only_point(R"({"tp": 1, "pp": 4, "recompute_granularity": "full"})", 64, true);
  ASSERT_GT(s.cluster.gpu.overlap_compute_slowdown, 0.0);
  PointResult x;
  EXPECT_FALSE(extrapolate_microbatches(s, time_point, x));
}

TEST(SweepExtrapolation, TooFewMicroBatchesAreSimulatedInFull) {
  const SweepSpec spec = parse_sweep_spec(spec_text(R"({"tp": 1, "pp": 4})", 32), "tiny.json");
  ASSERT_TRUE(spec.extrapolate_microbatches);
  const Point p = enumerate(spec).candidates.at(0);
  PointResult x;
  EXPECT_FALSE(extrapolate_microbatches(scenario_of(spec, p), time_point, x));
  EXPECT_EQ(x.iteration_time_s, 0.0);  // untouched
  PointResult full;
  time_point(scenario_of(spec, p), full);
  EXPECT_EQ(evaluate_point(spec, p).iteration_time_s, full.iteration_time_s);
}

TEST(SweepExtrapolation, TimesThatDoNotGrowLinearlyAreSimulatedInFull) {
  // A stand-in timer adding m^2 ns to the iteration: the growth over the short
  // runs (4, 8, 12 micro-batches: 48 and 80 ns more) differs.
  const config::Scenario s = only_point(R"({"tp": 1, "pp": 4})", 64);
  const PointTimer quadratic = [](const config::Scenario& shorter, PointResult& r) {
    time_point(shorter, r);
    const long long m = shorter.training.global_batch_size / (shorter.training.micro_batch_size * shorter.parallel.data);
    r.iteration_time_s = core::to_seconds(core::from_seconds(r.iteration_time_s) + m * m);
  };
  PointResult x;
  EXPECT_FALSE(extrapolate_microbatches(s, quadratic, x));
  EXPECT_EQ(x.status, Status::kRejected);  // untouched
  // The same timer adding 7m ns is linear: extrapolated, 7 x 32 ns above the plain run's.
  const PointTimer linear = [](const config::Scenario& shorter, PointResult& r) {
    time_point(shorter, r);
    const long long m = shorter.training.global_batch_size / (shorter.training.micro_batch_size * shorter.parallel.data);
    r.iteration_time_s = core::to_seconds(core::from_seconds(r.iteration_time_s) + 7 * m);
  };
  ASSERT_TRUE(extrapolate_microbatches(s, linear, x));
  PointResult full;
  time_point(s, full);
  EXPECT_EQ(core::from_seconds(x.iteration_time_s) - core::from_seconds(full.iteration_time_s), 7 * 32);
}

TEST(SweepExtrapolation, ATransientOverTheFirstStepTakesAFourthRun) {
  // 4 stages, 32 micro-batches: short runs of 4, 8, 12 and, when the first step
  // differs, 16. A stand-in timer adding 5 ns to the iteration at m = 4 only: the
  // growth from 4 to 8 is 5 ns less than from 8 to 12, the growth from 12 to 16
  // equals that from 8 to 12, and the line through 8, 12, 16 gives the plain
  // full simulation's time at 32 (the stand-in adds nothing there).
  const config::Scenario s = only_point(R"({"tp": 1, "pp": 4})", 64);
  const auto microbatches = [](const config::Scenario& shorter) {
    return shorter.training.global_batch_size / (shorter.training.micro_batch_size * shorter.parallel.data);
  };
  std::vector<long long> seen;
  const PointTimer first_step = [&](const config::Scenario& shorter, PointResult& r) {
    time_point(shorter, r);
    const long long m = microbatches(shorter);
    seen.push_back(m);
    if (m == 4) r.iteration_time_s = core::to_seconds(core::from_seconds(r.iteration_time_s) + 5);
  };
  PointResult x;
  ASSERT_TRUE(extrapolate_microbatches(s, first_step, x));
  EXPECT_EQ(seen, (std::vector<long long>{4, 8, 12, 16}));
  PointResult full;
  time_point(s, full);
  EXPECT_EQ(x.iteration_time_s, full.iteration_time_s);
  // A transient over two steps (5 ns more at m = 4 and 3 ns more at m = 8): the
  // last three are not on a line either, and the point is simulated in full.
  const PointTimer two_steps = [&](const config::Scenario& shorter, PointResult& r) {
    time_point(shorter, r);
    const long long m = microbatches(shorter);
    const long long extra = m == 4 ? 5 : m == 8 ? 3 : 0;
    r.iteration_time_s = core::to_seconds(core::from_seconds(r.iteration_time_s) + extra);
  };
  PointResult y;
  EXPECT_FALSE(extrapolate_microbatches(s, two_steps, y));
  EXPECT_EQ(y.status, Status::kRejected);  // untouched
  // Points already on a line take three runs, not four.
  seen.clear();
  const PointTimer plain = [&](const config::Scenario& shorter, PointResult& r) {
    time_point(shorter, r);
    seen.push_back(microbatches(shorter));
  };
  PointResult z;
  ASSERT_TRUE(extrapolate_microbatches(s, plain, z));
  EXPECT_EQ(seen, (std::vector<long long>{4, 8, 12}));
  EXPECT_EQ(z.iteration_time_s, full.iteration_time_s);
}

TEST(SweepExtrapolation, TheSpecKeyTurnsItOffAndResultsAreTheSame) {
  const std::string space = R"({"tp": [1, 2], "pp": [1, 2, 4], "zero_stage": [0, 1], "overlap_grad_reduce": true})";
  const SweepSpec on = parse_sweep_spec(spec_text(space, 128), "tiny.json");
  const SweepSpec off = parse_sweep_spec(spec_text(space, 128, R"(, "extrapolate_microbatches": false)"), "tiny.json");
  EXPECT_TRUE(on.extrapolate_microbatches);
  EXPECT_FALSE(off.extrapolate_microbatches);
  const Enumeration e = enumerate(on);
  const std::vector<PointResult> a = evaluate_points(on, e.candidates, 1);
  const std::vector<PointResult> b = evaluate_points(off, e.candidates, 1);
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(a[i].status, b[i].status);
    expect_same(a[i].iteration_time_s, b[i].iteration_time_s, "iteration_time_s");
    expect_same(a[i].breakdown_s.pipeline_bubble, b[i].breakdown_s.pipeline_bubble, "bubble");
    expect_same(a[i].mfu, b[i].mfu, "mfu");
  }
  try {
    parse_sweep_spec(spec_text(space, 128, R"(, "extrapolate_microbatches": "yes")"), "tiny.json");
    FAIL();
  } catch (const scenario::ScenarioError& error) {
    EXPECT_EQ(error.json_path(), "/extrapolate_microbatches");
  }
}

}  // namespace
}  // namespace trainsim::sweep
