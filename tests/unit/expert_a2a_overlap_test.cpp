// overlap_moe_expert_parallel_comm (Megatron-Core's --overlap-moe-expert-parallel-comm;
// docs/model.md, "All-to-alls beside another micro-batch"): a layer's passes split at
// their all-to-alls, and the combined 1F1B schedule's time saved on a graph priced at
// 1 TFLOP/s and 1 GB/s, counted by hand.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "fake_costs.h"
#include "graph_queries.h"
#include "scenario/errors.h"
#include "test_scenarios.h"
#include "workload/expert_overlap.h"
#include "workload/iteration_builder.h"

namespace trainsim {
namespace {

constexpr std::string_view kPlain = R"("ep": 8)";
constexpr std::string_view kOverlap = R"("ep": 8, "overlap_moe_expert_parallel_comm": true)";

workload::IterationGraph build(std::string_view parallelism) {
  const auto s = testing::make_scenario(testing::kMoe, R"("micro_batch_size": 2)", std::string(parallelism));
  return workload::build_iteration_graph(s.model, s.training, s.parallel, s.cluster, 1);
}

using testing::task_named;
using testing::waits_for;

double step_seconds(const workload::TaskGraph& g) { return testing::seconds_at_unit_rates(g); }

TEST(ExpertA2aOverlap, APassSplitsAtItsAllToAlls) {
  const auto s = testing::make_scenario(testing::kMoe, R"("micro_batch_size": 2)", std::string(kPlain));
  const workload::TransformerOps ops(s.model, s.training, 2, 1, false, 1, 8);
  const auto parts = workload::split_at_expert_all_to_alls(ops.layer_forward(0));
  ASSERT_EQ(parts[1].size(), 1U);
  EXPECT_EQ(parts[1][0].name, "layer0.moe_dispatch");
  EXPECT_TRUE(parts[1][0].overlapped);
  EXPECT_EQ(parts[3][0].name, "layer0.moe_combine");
  EXPECT_EQ(parts[2].front().name, "layer0.experts_up");
  EXPECT_EQ(parts[2].front().expert_waits, 1);
  EXPECT_EQ(parts[4].front().name, "layer0.moe_unpermute");
  EXPECT_EQ(parts[4].front().expert_waits, 1);
  EXPECT_EQ(parts[0].back().name, "layer0.moe_permute");
  const auto back = workload::split_at_expert_all_to_alls(ops.layer_backward(0));
  EXPECT_EQ(back[1][0].name, "layer0.moe_combine.backward");
  EXPECT_EQ(back[3][0].name, "layer0.moe_dispatch.backward");
  // A dense layer has no all-to-all: all of it is part 0.
  const auto dense = testing::make_scenario(testing::kDense, R"("micro_batch_size": 2)");
  const workload::TransformerOps dense_ops(dense.model, dense.training, 2);
  const auto whole = workload::split_at_expert_all_to_alls(dense_ops.layer_forward(0));
  EXPECT_EQ(whole[0].size(), dense_ops.layer_forward(0).size());
  for (std::size_t p = 1; p < workload::kExpertOverlapParts; ++p) EXPECT_TRUE(whole[p].empty());
}

TEST(ExpertA2aOverlap, OneMicroBatchsAllToAllsRunBesideTheOthersCompute) {
  const auto built = build(kOverlap);
  const workload::TaskGraph& g = built.graph;
  // Micro-batch 1's forward runs with micro-batch 0's backward: layer 0 forward beside
  // layer 1 backward. Its experts wait for its own dispatch, not for the combine's
  // gradient of the backward beside it.
  const auto named = [&](const std::string& name, int mb) -> const workload::Task& {
    for (const workload::Task& t : g.tasks())
      if (t.rank == 0 && t.microbatch == mb && g.work(t).name == name) return t;
    throw std::runtime_error("no task " + name);
  };
  const auto& dispatch = named("layer0.moe_dispatch", 1);
  EXPECT_TRUE(waits_for(g, named("layer0.experts_up", 1), dispatch));
  EXPECT_FALSE(waits_for(g, named("layer0.experts_up", 1), named("layer1.moe_combine.backward", 0)));
  EXPECT_TRUE(waits_for(g, named("layer1.experts_down.backward", 0), named("layer1.moe_combine.backward", 0)));
  // The dispatch follows the forward's permutation; the first micro-batch's forward runs alone, blocking.
  EXPECT_TRUE(waits_for(g, dispatch, named("layer0.moe_permute", 1)));
  EXPECT_TRUE(waits_for(g, named("layer0.experts_up", 0), named("layer0.moe_dispatch", 0)));
}

TEST(ExpertA2aOverlap, EachCombinedStepHidesItsFourAllToAllsPerLayer) {
  // kMoe, EP 8, 2 x 512 tokens: each all-to-all moves k T h x 2 B = 2 x 1024 x 1024 x 2 =
  // 4,194,304 B -> 4.194304 ms, shorter than the compute beside it (attention at 1 TFLOP/s:
  // QKV alone 6.4 ms; the experts 25.8 ms forward, 51.5 ms backward). 64 sequences over DP 8,
  // 2 a micro-batch: 4 micro-batches, so 3 combined steps, each hiding 2 layers x 4
  // all-to-alls; the first forward and the last backward run alone.
  const double saved = 3 * 2 * 4 * 4.194304e-3;
  EXPECT_NEAR(step_seconds(build(kPlain).graph) - step_seconds(build(kOverlap).graph), saved, 1e-7);
}

void expect_refused(const std::string& parallelism, const std::string& words) {
  try {
    (void)testing::make_scenario(testing::kMoe, R"("micro_batch_size": 2)", parallelism);
    FAIL() << "accepted " << parallelism;
  } catch (const scenario::ScenarioError& e) {
    EXPECT_NE(std::string(e.what()).find("/parallelism/overlap_moe_expert_parallel_comm"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
  }
}

TEST(ExpertA2aOverlap, RefusedWhereMegatronCoreRefusesItOrTrainsimDoesNotModelIt) {
  const std::string on = R"("overlap_moe_expert_parallel_comm": true)";
  expect_refused(on, "expert_model_parallel_size > 1");
  expect_refused(R"("ep": 4, "pp": 2, )" + on, "interleaved schedule");
  expect_refused(R"("ep": 8, "recompute_granularity": "full", )" + on, "\"none\" or \"selective\"");
  expect_refused(R"("ep": 8, "zero_stage": 3, )" + on, "zero_stage 3");
}

}  // namespace
}  // namespace trainsim
