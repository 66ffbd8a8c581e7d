// moe_shared_expert_overlap (Megatron-Core's --moe-shared-expert-overlap; docs/model.md,
// "Shared experts beside the all-to-alls"): the shared experts' linears run beside the
// dispatch and combine all-to-alls, forward and backward. Dependencies of one layer,
// and the time saved on a graph priced at 1 TFLOP/s and 1 GB/s, counted by hand.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <utility>

#include "fake_costs.h"
#include "graph_queries.h"
#include "scenario/errors.h"
#include "test_scenarios.h"
#include "workload/iteration_builder.h"

namespace trainsim {
namespace {

// One MoE layer of 8 SwiGLU experts (top-2) and a shared expert of 1536; b s = 2 x 512 tokens.
const std::string kShared = R"({"num_layers": 1, "hidden_size": 1024, "ffn_hidden_size": 2048,
                                 "num_attention_heads": 8, "seq_length": 512, "vocab_size": 1024,
                                 "num_experts": 8, "moe_router_topk": 2, "swiglu": true, "add_bias_linear": false,
                                 "moe_shared_expert_intermediate_size": 1536})";
constexpr std::string_view kPlain = R"("ep": 8)";
constexpr std::string_view kOverlap = R"("ep": 8, "moe_shared_expert_overlap": true)";

workload::IterationGraph build(std::string_view parallelism) {
  const auto s = testing::make_scenario(kShared, R"("micro_batch_size": 2)", std::string(parallelism));
  return workload::build_iteration_graph(s.model, s.training, s.parallel, s.cluster, 1);
}

using testing::task_named;
using testing::waits_for;

double step_seconds(const workload::TaskGraph& g) { return testing::seconds_at_unit_rates(g); }

TEST(SharedExpertOverlap, TheRoutedExpertsWaitForTheDispatchTheSharedOnesDoNot) {
  const auto built = build(kOverlap);
  const workload::TaskGraph& g = built.graph;
  const auto& dispatch = task_named(g, "layer0.moe_dispatch");
  const auto& combine = task_named(g, "layer0.moe_combine");
  EXPECT_TRUE(waits_for(g, task_named(g, "layer0.experts_up"), dispatch));
  EXPECT_FALSE(waits_for(g, task_named(g, "layer0.shared_up"), dispatch));
  EXPECT_TRUE(waits_for(g, task_named(g, "layer0.moe_unpermute"), combine));
  EXPECT_FALSE(waits_for(g, task_named(g, "layer0.shared_down"), combine));
  // Backward: the combine's all-to-all beside the shared experts' second linear,
  // the dispatch's beside their first; the routed experts and the permutation wait.
  const auto& combine_b = task_named(g, "layer0.moe_combine.backward");
  const auto& dispatch_b = task_named(g, "layer0.moe_dispatch.backward");
  EXPECT_TRUE(waits_for(g, task_named(g, "layer0.experts_down.backward"), combine_b));
  EXPECT_TRUE(waits_for(g, task_named(g, "layer0.moe_permute.backward"), dispatch_b));
  EXPECT_FALSE(waits_for(g, task_named(g, "layer0.shared_up.backward"), dispatch_b));
}

TEST(SharedExpertOverlap, SameWorkInAnotherOrder) {
  const auto count = [](const workload::TaskGraph& g) {
    double flops = 0.0;
    double bytes = 0.0;
    for (const workload::Task& t : g.tasks()) {
      if (t.rank != 0) continue;
      const workload::Work& w = g.work(t);
      flops += w.compute.flops;
      bytes += w.collective ? w.collective->bytes : 0.0;
    }
    return std::pair{flops, bytes};
  };
  EXPECT_EQ(count(build(kOverlap).graph), count(build(kPlain).graph));
}

TEST(SharedExpertOverlap, EachAllToAllHidesBehindTheSharedLinearBesideIt) {
  // Per micro-batch (T = 1024 tokens, h = 1024, k = 2, bf16):
  //   dispatch = combine = k T h x 2 B = 4,194,304 B -> 4.194304 ms
  //   shared up: 2 T (2 x 1536) h = 6.442450944e9 FLOPs -> 6.442450944 ms, down 3.221225472 ms
  // Forward: min(4.194304, 6.442450944) + min(4.194304, 3.221225472) = 7.415529472 ms.
  // Backward (data and weight gradients, twice the FLOPs): the combine's beside
  // shared down (6.442450944), the dispatch's beside shared up (12.884901888):
  // 2 x 4.194304 = 8.388608 ms. 64 sequences over DP 8, 2 a micro-batch: 4 micro-batches.
  const double saved = 4 * (7.415529472e-3 + 8.388608e-3);
  EXPECT_NEAR(step_seconds(build(kPlain).graph) - step_seconds(build(kOverlap).graph), saved, 1e-7);
}

TEST(SharedExpertOverlap, WithTensorParallelExpertsTheGatherWaitsForTheDispatch) {
  // TP 2 with SP and EP 4: the experts' own all-gather (moe_f) follows the dispatch
  // and its backward (moe_g's all-gather) follows the combine's; the step still runs
  // and saves time.
  constexpr std::string_view tp = R"("tp": 2, "sequence_parallel": true, "ep": 4)";
  const auto built = build(std::string(tp) + R"(, "moe_shared_expert_overlap": true)");
  const workload::TaskGraph& g = built.graph;
  EXPECT_TRUE(waits_for(g, task_named(g, "layer0.moe_f"), task_named(g, "layer0.moe_dispatch")));
  EXPECT_TRUE(waits_for(g, task_named(g, "layer0.moe_g.backward"), task_named(g, "layer0.moe_combine.backward")));
  EXPECT_LT(step_seconds(g), step_seconds(build(tp).graph));
}

TEST(SharedExpertOverlap, RefusedWithoutSharedExperts) {
  try {
    (void)testing::make_scenario(testing::kMoe, R"("micro_batch_size": 2)", std::string(kOverlap));
    FAIL() << "a MoE model without shared experts was accepted";
  } catch (const scenario::ScenarioError& e) {
    EXPECT_NE(std::string(e.what()).find("moe_shared_expert_overlap"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("moe_shared_expert_intermediate_size"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace trainsim
