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
#include "workload/memory.h"
#include "workload/pipeline_schedule.h"

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

std::string steps_text(int stages, int stage, int microbatches, int chunks) {
  std::string out;
  const auto one = [](const workload::PipelineStep& s) {
    return std::string(s.forward ? "F" : "B") + std::to_string(s.microbatch) + "c" + std::to_string(s.chunk);
  };
  for (const workload::CombinedStep& s : workload::combined_1f1b_steps(stages, stage, microbatches, chunks)) {
    if (!out.empty()) out += ' ';
    if (s.forward && s.backward) out += one(*s.forward) + "+" + one(*s.backward);
    else out += one(s.forward ? *s.forward : *s.backward);
  }
  return out;
}

TEST(ExpertA2aOverlap, CombinedOneFOneBIsTheInterleavedOrderWithOneMoreWarmupForward) {
  // Megatron-Core's get_pp_rank_microbatches: warm-up 2 (p - s - 1) + (v - 1) p + 1, then
  // forward k + warm-up together with backward k. p 2, v 2, 4 micro-batches: stage 0 warms
  // up 5 forwards, stage 1 three; virtual micro-batch k runs chunk (k mod 4) / 2 of
  // micro-batch 2 (k / 4) + k mod 2, backwards from the last chunk.
  EXPECT_EQ(steps_text(2, 0, 4, 2),
            "F0c0 F1c0 F0c1 F1c1 F2c0 F3c0+B0c1 F2c1+B1c1 F3c1+B0c0 B1c0 B2c1 B3c1 B2c0 B3c0");
  EXPECT_EQ(steps_text(2, 1, 4, 2),
            "F0c0 F1c0 F0c1 F1c1+B0c1 F2c0+B1c1 F3c0+B0c0 F2c1+B1c0 F3c1+B2c1 B3c1 B2c0 B3c0");
  // Without pipelining: combined_1f1b_schedule_for_no_pipelining.
  EXPECT_EQ(steps_text(1, 0, 3, 1), "F0c0 F1c0+B0c0 F2c0+B1c0 B2c0");
  EXPECT_THROW((void)workload::combined_1f1b_steps(2, 0, 4, 1), std::invalid_argument);
}

// Four MoE layers on 2 stages x 2 virtual stages, one layer each: stage 0 holds layers
// 0 and 2, stage 1 layers 1 and 3.
const std::string kFourLayers = R"({"num_layers": 4, "hidden_size": 1024, "ffn_hidden_size": 2048,
                                      "num_attention_heads": 8, "seq_length": 512, "vocab_size": 32000,
                                      "num_experts": 8, "moe_router_topk": 2, "swiglu": true,
                                      "add_bias_linear": false})";

workload::IterationGraph build_pipelined(bool overlap) {
  const std::string parallelism = std::string(R"("ep": 4, "pp": 2, "virtual_pipeline_model_parallel_size": 2)") +
                                  (overlap ? R"(, "overlap_moe_expert_parallel_comm": true)" : "");
  const auto s = testing::make_scenario(kFourLayers, R"("micro_batch_size": 2)", parallelism);
  return workload::build_iteration_graph(s.model, s.training, s.parallel, s.cluster, 1);
}

TEST(ExpertA2aOverlap, WithPipelineParallelismAForwardAndABackwardOfOtherChunksShareAPass) {
  // 64 sequences, DP 4, micro-batch 2: 8 micro-batches. Stage 0's first combined pass is
  // micro-batch 3's forward of chunk 0 (layer 0) with micro-batch 0's backward of chunk 1
  // (layer 2): layer 0's forward beside layer 2's backward.
  const auto built = build_pipelined(true);
  const workload::TaskGraph& g = built.graph;
  const int stage1 = built.simulated_ranks.at(1);
  const auto named = [&](int rank, const std::string& name, int mb) -> const workload::Task& {
    for (const workload::Task& t : g.tasks())
      if (t.rank == rank && t.microbatch == mb && g.work(t).name == name) return t;
    throw std::runtime_error("no task " + name);
  };
  // The forward's routed part (its sort by local expert, 2 of 8 experts per rank at EP 4,
  // then the experts) waits for its own dispatch, not for the combine's gradient beside it.
  EXPECT_TRUE(waits_for(g, named(0, "layer0.moe_sort_chunks", 3), named(0, "layer0.moe_dispatch", 3)));
  EXPECT_FALSE(waits_for(g, named(0, "layer0.moe_sort_chunks", 3), named(0, "layer2.moe_combine.backward", 0)));
  EXPECT_TRUE(waits_for(g, named(0, "layer0.moe_dispatch", 3), named(0, "layer0.moe_permute", 3)));
  // The backward's first op waits for the gradient stage 1 sends from virtual stage 3, and
  // the forward's activations go on after the pass's last layer op.
  const workload::Task& grad_in = named(stage1, "send_gradient.vstage3", 0);
  const workload::Task* first_backward = nullptr;
  for (const workload::Task& t : g.tasks())
    if (t.rank == 0 && t.microbatch == 0 && t.category == workload::Category::kBackward &&
        g.work(t).name.rfind("layer2.", 0) == 0) {
      first_backward = &t;
      break;
    }
  ASSERT_NE(first_backward, nullptr);
  EXPECT_TRUE(waits_for(g, *first_backward, grad_in));
  const workload::Task& send = named(0, "send_activation.vstage0", 3);
  const workload::Task& before = g.tasks()[*send.deps.begin()];
  EXPECT_EQ(before.microbatch, 3);
  EXPECT_EQ(g.work(before).name.rfind("layer0.", 0), 0U) << g.work(before).name;
}

TEST(ExpertA2aOverlap, WithPipelineParallelismTheHiddenAllToAllsShortenTheStep) {
  // The same step with the all-to-alls exposed is longer: each combined pass hides up to
  // four all-to-alls per layer pair (4.194304 ms each at 1 GB/s), at most 8 micro-batch pairs
  // x 2 chunks on the critical path, and one more warm-up forward can only add bubble.
  const double plain = step_seconds(build_pipelined(false).graph);
  const double overlap = step_seconds(build_pipelined(true).graph);
  EXPECT_LT(overlap, plain);
  EXPECT_GT(overlap, plain - 2 * 8 * 2 * 4 * 4.194304e-3);
}

TEST(ExpertA2aOverlap, TheExtraWarmupForwardHoldsWhatThePlainFirstSteadyForwardHolds) {
  // Stage 0 of p 2, v 2 (one layer a chunk, two a stage), 8 micro-batches: the interleaved
  // schedule warms up 2 (p - 1) + (v - 1) p = 4 forwards and its first steady forward comes
  // before its backward, 5 chunks alive; the combined one warms up 5 and runs each pair's
  // backward first, 5 again: 5 chunks / 2 chunks a micro-batch = 2.5 micro-batches in flight.
  for (const bool overlap : {false, true}) {
    const std::string parallelism = std::string(R"("ep": 4, "pp": 2, "virtual_pipeline_model_parallel_size": 2)") +
                                    (overlap ? R"(, "overlap_moe_expert_parallel_comm": true)" : "");
    const auto s = testing::make_scenario(kFourLayers, R"("micro_batch_size": 2)", parallelism);
    const auto stages = workload::memory_per_stage(s.model, s.training, s.parallel);
    EXPECT_DOUBLE_EQ(stages.at(0).in_flight_microbatches, 2.5) << overlap;
    EXPECT_DOUBLE_EQ(stages.at(1).in_flight_microbatches, 1.5) << overlap;  // 3 chunks: warm-up 2 (+1)
  }
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
  expect_refused(R"("ep": 4, "pp": 2, )" + on, "virtual_pipeline_model_parallel_size >= 2");
  expect_refused(R"("ep": 8, "recompute_granularity": "full", )" + on, "\"none\" or \"selective\"");
  expect_refused(R"("ep": 8, "zero_stage": 3, )" + on, "zero_stage 3");
}

}  // namespace
}  // namespace trainsim
