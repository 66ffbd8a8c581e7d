// Tensor and sequence parallelism: the collectives of one transformer layer
// against Megatron-LM (Shoeybi et al. 2019, section 3: f and g, an all-reduce
// per attention and MLP block in forward and in backward) and Korthikanti et
// al. (2022, section 4.2.2: with sequence parallelism each all-reduce becomes a
// reduce-scatter plus an all-gather of the same size, so the volume is equal).
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <stdexcept>
#include <string>

#include "graph_queries.h"
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

// (collective kind, bytes) -> count on rank 0's TP stream for layer 0 of micro-batch 0.
std::map<std::pair<net::CollectiveKind, double>, int> layer_collectives_by_size(const std::string& parallelism,
                                                                                 const std::string& training) {
  const auto s = testing::make_scenario(kModel, R"("micro_batch_size": 2, )" + training, parallelism);
  const auto g = workload::build_iteration_graph(s.model, s.training, s.parallel, s.cluster, 1);
  std::map<std::pair<net::CollectiveKind, double>, int> out;
  for (const workload::Task& t : g.graph.tasks()) {
    if (t.rank != 0 || t.stream != workload::Stream::kTpComm || t.microbatch != 0 || t.layer != 0) continue;
    const net::Collective& c = *g.graph.work(t).collective;
    ++out[{c.kind, c.bytes}];
  }
  return out;
}

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
  // PyTorch DTensor's backward (tp_backward "sync"): the gathered input is saved.
  const auto c = layer_collectives(R"("tp": 4, "sequence_parallel": true)", R"("tp_backward": "sync")");
  ASSERT_EQ(c.size(), 2U);
  EXPECT_EQ(c.at(net::CollectiveKind::kAllGather), std::make_pair(4, kActivation));
  EXPECT_EQ(c.at(net::CollectiveKind::kReduceScatter), std::make_pair(4, kActivation));
}

TEST(TensorParallel, MegatronGathersAColumnParallelInputAgainInTheBackwardPass) {
  // Transformer Engine's LayerNormLinear and Megatron-LM's ColumnParallelLinear save
  // only the input's sequence shard and all-gather it again for the weight gradient:
  // two more all-gathers per layer (QKV and MLP-up), docs/model.md "Tensor-parallel backward".
  const auto c = layer_collectives(R"("tp": 4, "sequence_parallel": true)");
  ASSERT_EQ(c.size(), 2U);
  EXPECT_EQ(c.at(net::CollectiveKind::kAllGather), std::make_pair(6, kActivation));
  EXPECT_EQ(c.at(net::CollectiveKind::kReduceScatter), std::make_pair(4, kActivation));
}

TEST(TensorParallel, AnFp8RecipeGathersTheQuantizedInput) {
  // Transformer Engine quantizes a LayerNormLinear's input (the norm writes fp8
  // ln_out) before gather_along_first_dim, forward and in the backward re-gather: the
  // 4 input all-gathers move 1 byte an element, S / 2 each; the output gradients'
  // all-gathers (row-parallel backward) and every reduce-scatter stay bf16.
  const auto c = layer_collectives_by_size(R"("tp": 4, "sequence_parallel": true)", R"("precision": "fp8")");
  EXPECT_EQ(c.at({net::CollectiveKind::kAllGather, kActivation / 2}), 4);
  EXPECT_EQ(c.at({net::CollectiveKind::kAllGather, kActivation}), 2);
  EXPECT_EQ(c.at({net::CollectiveKind::kReduceScatter, kActivation}), 4);
}

using testing::task_named;
using testing::waits_for;

TEST(TensorParallel, AColumnParallelBackwardRunsItsCollectivesBesideTheTwoGradients) {
  // Megatron-LM / Transformer Engine with SP: the all-gather of the saved input runs
  // beside the data gradient, the reduce-scatter of the data gradient beside the
  // weight gradient; the weight gradient waits for the gather, the norm's backward
  // for the reduce-scatter.
  const auto s = testing::make_scenario(kModel, R"("micro_batch_size": 2)", R"("tp": 4, "sequence_parallel": true)");
  const auto built = workload::build_iteration_graph(s.model, s.training, s.parallel, s.cluster, 1);
  const workload::TaskGraph& g = built.graph;
  const auto& gather = task_named(g, "layer0.mlp_f.input_gather.backward");
  const auto& data = task_named(g, "layer0.mlp_up.data_gradient.backward");
  const auto& reduce = task_named(g, "layer0.mlp_f.backward");
  const auto& weight = task_named(g, "layer0.mlp_up.weight_gradient.backward");
  const auto& norm = task_named(g, "layer0.post_attn_norm.backward");
  EXPECT_EQ(gather.stream, workload::Stream::kTpComm);
  EXPECT_EQ(reduce.stream, workload::Stream::kTpComm);
  EXPECT_FALSE(waits_for(g, data, gather));
  EXPECT_TRUE(waits_for(g, reduce, data));
  EXPECT_TRUE(waits_for(g, weight, gather));
  EXPECT_FALSE(waits_for(g, weight, reduce));
  EXPECT_TRUE(waits_for(g, norm, reduce));
  // Each gradient is one GEMM as large as the forward: 2 x 1024 tokens x (4096 / 4) x 1024.
  EXPECT_DOUBLE_EQ(g.work(data).compute.flops, 2.0 * 1024 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(g.work(weight).compute.flops, 2.0 * 1024 * 1024 * 1024);
  EXPECT_EQ(g.work(weight).compute.gradients, hw::Gradients::kWeight);
}

TEST(TensorParallel, NoCollectivesWithoutTensorParallelism) {
  EXPECT_TRUE(layer_collectives(R"("tp": 1)").empty());
}

}  // namespace
}  // namespace trainsim
