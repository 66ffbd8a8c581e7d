// Every task of an iteration graph says what it does (workload::Role), counted
// here against the layout: the code that reads a graph finds tasks by role,
// never by name.
#include <gtest/gtest.h>

#include <map>

#include "test_scenarios.h"
#include "workload/iteration_builder.h"

namespace trainsim {
namespace {

using workload::Category;
using workload::Role;

const std::string kModel = R"({"num_layers": 4, "hidden_size": 1024, "num_attention_heads": 8,
                                "seq_length": 512, "vocab_size": 32000})";

std::map<Role, int> count_roles(const config::Scenario& s, int iterations = 1) {
  const auto g = workload::build_iteration_graph(s.model, s.training, s.parallel, s.cluster, iterations);
  std::map<Role, int> n;
  for (const workload::Task& t : g.graph.tasks()) {
    const workload::Work& w = g.graph.work(t);
    ++n[t.role];
    // Compute roles on the compute stream, communication roles with a collective.
    const bool compute = t.role == Role::kEmbedding || t.role == Role::kLayer || t.role == Role::kHead ||
                         t.role == Role::kOptimizerStep;
    EXPECT_EQ(compute, !w.collective.has_value()) << w.name;
    if (t.role == Role::kOptimizerStep) {
      EXPECT_EQ(t.category, Category::kOptimizer);
    }
    if (t.role == Role::kLayer) {
      EXPECT_GE(t.layer, 0) << w.name;
    }
    if (t.role == Role::kEmbedding || t.role == Role::kHead) {
      EXPECT_EQ(t.layer, -1) << w.name;
    }
  }
  return n;
}

TEST(TaskRoles, PipelineSendsOnePerMicroBatchAndStageBoundary) {
  // pp 4, dp 2 on 8 GPUs, 64 / (2 x 2) = 16 micro-batches: 3 boundaries each way.
  const auto s = testing::make_scenario(kModel, R"("micro_batch_size": 2)", R"("pp": 4, "dp": 2)");
  const auto n = count_roles(s);
  EXPECT_EQ(n.at(Role::kActivationSend), 16 * 3);
  EXPECT_EQ(n.at(Role::kGradientSend), 16 * 3);
  EXPECT_EQ(n.at(Role::kOptimizerStep), 4);  // one per simulated stage rank
  // The embedding runs on the first stage only: its forward and backward op per
  // micro-batch (fused framework, no TP: one op each).
  EXPECT_EQ(n.at(Role::kEmbedding), 2 * 16);
  EXPECT_EQ(n.count(Role::kPsPush), 0u);
}

TEST(TaskRoles, ZeroOneGathersWhatItReduces) {
  // ZeRO-1 without overlap_param_gather on 8 GPUs: every bucket reduce-scattered,
  // then gathered after the step; three iterations.
  const auto s = testing::make_scenario(kModel, R"("micro_batch_size": 8)", R"("zero_stage": 1)");
  const auto n = count_roles(s, 3);
  EXPECT_GT(n.at(Role::kGradientReduction), 0);
  EXPECT_EQ(n.at(Role::kParameterGather), n.at(Role::kGradientReduction));
  EXPECT_EQ(n.at(Role::kOptimizerStep), 3);
}

TEST(TaskRoles, AsyncPsPushesEveryBucketToTheServersAndPullsOnce) {
  // Four co-located servers on 8 GPUs; rank 0 holds server 0 itself, so it
  // pushes to and pulls from the other three; no step of its own.
  const auto s = testing::make_scenario(
      kModel, R"("micro_batch_size": 8)",
      R"("mode": "async_ps", "num_servers": 4, "overlap_grad_reduce": false)");
  const auto n = count_roles(s);
  EXPECT_EQ(n.at(Role::kPsPush), 1);  // one bucket without overlap_grad_reduce
  EXPECT_EQ(n.at(Role::kPsPull), 1);
  EXPECT_EQ(n.count(Role::kOptimizerStep), 0u);
  EXPECT_EQ(n.count(Role::kGradientReduction), 0u);
}

TEST(TaskRoles, LocalSgdAveragesEverySyncPeriod) {
  const auto s = testing::make_scenario(kModel, R"("micro_batch_size": 8)",
                                        R"("mode": "local_sgd", "sync_period": 2)");
  const auto n = count_roles(s, 5);
  EXPECT_EQ(n.at(Role::kParameterAverage), 2);  // after steps 2 and 4
  EXPECT_EQ(n.at(Role::kOptimizerStep), 5);
}

TEST(TaskRoles, TensorParallelCollectivesAreLayerCollectives) {
  // tp 2 without SP: per layer g all-reduces after attention and after the MLP
  // in the forward pass, f before each in the backward (Shoeybi et al. 2019):
  // 4 per layer and micro-batch.
  const auto s = testing::make_scenario(kModel, R"("micro_batch_size": 8)", R"("tp": 2)");
  const auto g = workload::build_iteration_graph(s.model, s.training, s.parallel, s.cluster, 1);
  int layer_all_reduces = 0;
  for (const workload::Task& t : g.graph.tasks())
    if (t.role == Role::kLayerCollective && t.layer >= 0) {
      EXPECT_EQ(t.stream, workload::Stream::kTpComm);
      ++layer_all_reduces;
    }
  EXPECT_EQ(layer_all_reduces, 4 * 4 * static_cast<int>(g.num_microbatches));
}

}  // namespace
}  // namespace trainsim
