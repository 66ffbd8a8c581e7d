// Tensor and sequence parallelism: the collectives of one transformer layer
// against Megatron-LM (Shoeybi et al. 2019, section 3: f and g, an all-reduce
// per attention and MLP block in forward and in backward) and Korthikanti et
// al. (2022, section 4.2.2: with sequence parallelism each all-reduce becomes a
// reduce-scatter plus an all-gather of the same size, so the volume is equal).
#include <gtest/gtest.h>

#include <map>

#include "test_scenarios.h"
#include "workload/iteration_builder.h"

namespace trainsim {
namespace {

const std::string kModel = R"({"num_layers": 2, "hidden_size": 1024, "num_attention_heads": 8,
                                "seq_length": 512, "vocab_size": 32000})";

// Collective kind -> (count, bytes each) on rank 0's TP stream for layer 0 of
// micro-batch 0.
std::map<net::CollectiveKind, std::pair<int, double>> layer_collectives(const std::string& parallelism,
                                                                        const std::string& training = "") {
  const auto s = testing::make_scenario(kModel, R"("micro_batch_size": 2)" + (training.empty() ? "" : ", " + training),
                                        parallelism);
  const auto g = workload::build_iteration_graph(s.model, s.training, s.parallel, s.cluster, 1);
  std::map<net::CollectiveKind, std::pair<int, double>> out;
  for (const workload::Task& t : g.graph.tasks()) {
    const workload::Work& w = g.graph.work(t);
    if (t.rank != 0 || t.stream != workload::Stream::kTpComm || t.microbatch != 0 || t.layer != 0) continue;
    auto& [count, bytes] = out[w.collective->kind];
    ++count;
    EXPECT_TRUE(bytes == 0.0 || bytes == w.collective->bytes);
    bytes = w.collective->bytes;
    EXPECT_EQ(w.collective->group.size, 4);
  }
  return out;
}

constexpr double kActivation = 512.0 * 2 * 1024 * 2;  // s b h bf16 bytes

TEST(TensorParallel, FourAllReducesPerLayer) {
  const auto c = layer_collectives(R"("tp": 4)");
  ASSERT_EQ(c.size(), 1U);
  EXPECT_EQ(c.at(net::CollectiveKind::kAllReduce), std::make_pair(4, kActivation));
}

TEST(TensorParallel, FullRecomputationRepeatsTheForwardAllReduces) {
  const auto c = layer_collectives(R"("tp": 4, "recompute_granularity": "full")");
  EXPECT_EQ(c.at(net::CollectiveKind::kAllReduce), std::make_pair(6, kActivation));
}

TEST(TensorParallel, SequenceParallelismSplitsEachAllReduceInTwo) {
  const auto c = layer_collectives(R"("tp": 4, "sequence_parallel": true)");
  ASSERT_EQ(c.size(), 2U);
  EXPECT_EQ(c.at(net::CollectiveKind::kAllGather), std::make_pair(4, kActivation));
  EXPECT_EQ(c.at(net::CollectiveKind::kReduceScatter), std::make_pair(4, kActivation));
}

TEST(TensorParallel, NoCollectivesWithoutTensorParallelism) {
  EXPECT_TRUE(layer_collectives(R"("tp": 1)").empty());
}

}  // namespace
}  // namespace trainsim
