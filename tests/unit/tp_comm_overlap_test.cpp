// tp_comm_overlap (Megatron-Core's --tp-comm-overlap through Transformer Engine's
// userbuffers, docs/model.md "Tensor-parallel communication overlap"): the tasks of
// one layer against the defaults of TE's initialize_ub, counted by hand.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <stdexcept>
#include <string>

#include "scenario/errors.h"
#include "graph_queries.h"
#include "test_scenarios.h"
#include "workload/iteration_builder.h"

namespace trainsim {
namespace {

const std::string kModel = R"({"num_layers": 2, "hidden_size": 1024, "num_attention_heads": 8,
                                "seq_length": 512, "vocab_size": 32000})";
constexpr double kActivation = 512.0 * 2 * 1024 * 2;  // s b h bf16 bytes: one gathered input
constexpr std::string_view kOverlap = R"("tp": 4, "sequence_parallel": true, "tp_comm_overlap": true)";

workload::IterationGraph build(std::string_view parallelism, const std::string& training = "") {
  const auto s = testing::make_scenario(kModel, R"("micro_batch_size": 2)" + training, std::string(parallelism));
  return workload::build_iteration_graph(s.model, s.training, s.parallel, s.cluster, 1);
}

using testing::task_named;
using testing::waits_for;

struct Traffic {
  int count = 0;
  double bytes = 0.0;
  int copy_engine = 0;
};
// Rank 0's tensor-parallel transfers of layer 0, micro-batch 0, by kind.
std::map<net::CollectiveKind, Traffic> layer_traffic(const workload::TaskGraph& g) {
  std::map<net::CollectiveKind, Traffic> out;
  for (const workload::Task& t : g.tasks()) {
    if (t.rank != 0 || t.stream != workload::Stream::kTpComm || t.microbatch != 0 || t.layer != 0) continue;
    const net::Collective& c = *g.work(t).collective;
    Traffic& x = out[c.kind];
    ++x.count;
    x.bytes += c.bytes;
    x.copy_engine += c.copy_engine ? 1 : 0;
  }
  return out;
}

double layer_flops(const workload::TaskGraph& g) {
  double flops = 0.0;
  for (const workload::Task& t : g.tasks())
    if (t.rank == 0 && t.microbatch == 0 && t.layer == 0 && t.stream == workload::Stream::kCompute)
      flops += g.work(t).compute.flops;
  return flops;
}

TEST(TpCommOverlap, EachGatherBecomesARingExchangeOnTheCopyEngines) {
  // Forward: QKV and MLP-up each take t - 1 = 3 ring steps of one shard (S / 4);
  // backward: attention-out and MLP-down gather their output gradient the same way.
  // 12 steps of S / 4 per layer move 3 S, what the four all-gathers they replace
  // move per rank ((t - 1) / t S each). The bulk re-gathers (2) and the backward
  // reduce-scatters (2) stay whole; the forward reduce-scatters go in 4 chunks each.
  const auto built = build(kOverlap);
  const auto c = layer_traffic(built.graph);
  const Traffic& ring = c.at(net::CollectiveKind::kSendRecv);
  EXPECT_EQ(ring.count, 12);
  EXPECT_EQ(ring.copy_engine, 12);
  EXPECT_DOUBLE_EQ(ring.bytes, 12 * kActivation / 4);
  EXPECT_EQ(c.at(net::CollectiveKind::kAllGather).count, 2);
  EXPECT_DOUBLE_EQ(c.at(net::CollectiveKind::kAllGather).bytes, 2 * kActivation);
  const Traffic& scatter = c.at(net::CollectiveKind::kReduceScatter);
  EXPECT_EQ(scatter.count, 4 + 4 + 2);
  EXPECT_EQ(scatter.copy_engine, 0);  // reductions run on SMs
  EXPECT_DOUBLE_EQ(scatter.bytes, 4 * kActivation);
}

TEST(TpCommOverlap, TheChunksDoTheLayersWork) {
  // QKV chunk: 2 x (1024 / 4 tokens) x (3 x 1024 / 4) x 1024; the layer's FLOPs are
  // those of the run without overlap.
  const auto built = build(kOverlap);
  const workload::TaskGraph& g = built.graph;
  EXPECT_DOUBLE_EQ(g.work(task_named(g, "layer0.qkv_proj.chunk3")).compute.flops, 2.0 * 256 * 768 * 1024);
  EXPECT_DOUBLE_EQ(g.work(task_named(g, "layer0.mlp_down.chunk0")).compute.flops, 2.0 * 256 * 1024 * 1024);
  const auto plain = build(R"("tp": 4, "sequence_parallel": true)");
  EXPECT_DOUBLE_EQ(layer_flops(g), layer_flops(plain.graph));
}

TEST(TpCommOverlap, ChunksWaitForTheirShardAndTheResidualForTheReduceScatters) {
  const auto built = build(kOverlap);
  const workload::TaskGraph& g = built.graph;
  // Ring: chunk 0 computes on the shard already here, chunk i > 0 waits for step i - 1.
  const auto& step0 = task_named(g, "layer0.attn_f.ring0");
  EXPECT_FALSE(waits_for(g, task_named(g, "layer0.qkv_proj.chunk0"), step0));
  EXPECT_TRUE(waits_for(g, task_named(g, "layer0.qkv_proj.chunk1"), step0));
  // Pipeline: each chunk's reduce-scatter starts after it; the residual waits for all four.
  const auto& residual = task_named(g, "layer0.attn_residual");
  for (int c = 0; c < 4; ++c) {
    const auto& scatter = task_named(g, "layer0.attn_g.chunk" + std::to_string(c));
    EXPECT_TRUE(waits_for(g, scatter, task_named(g, "layer0.attn_out_proj.chunk" + std::to_string(c))));
    EXPECT_TRUE(waits_for(g, residual, scatter));
  }
  // Backward: the data gradient's chunks ride the ring; the weight gradient follows them.
  const auto& data1 = task_named(g, "layer0.mlp_down.data_gradient.chunk1.backward");
  EXPECT_TRUE(waits_for(g, data1, task_named(g, "layer0.mlp_g.ring0")));
  EXPECT_EQ(g.work(data1).compute.gradients, hw::Gradients::kData);
  EXPECT_DOUBLE_EQ(g.work(task_named(g, "layer0.mlp_down.weight_gradient.backward")).compute.flops,
                   2.0 * 1024 * 1024 * 1024);
}

TEST(TpCommOverlap, AnFp8RecipeGathersFp8) {
  // initialize_ub's fp8_buf: the all-gather buffers hold fp8 (1 byte) under an fp8
  // recipe, the reduce-scatters the activation type.
  const auto built = build(kOverlap, R"(, "precision": "fp8")");
  const auto c = layer_traffic(built.graph);
  EXPECT_DOUBLE_EQ(c.at(net::CollectiveKind::kSendRecv).bytes, 12 * kActivation / 4 / 2);
  EXPECT_DOUBLE_EQ(c.at(net::CollectiveKind::kAllGather).bytes, 2 * kActivation / 2);
  EXPECT_DOUBLE_EQ(c.at(net::CollectiveKind::kReduceScatter).bytes, 4 * kActivation);
}

constexpr std::string_view kAsync = R"("tp": 4, "sequence_parallel": true, "enable_async_tensor_parallel": true)";
const std::string kDTensor = R"(, "tp_backward": "sync")";

TEST(AsyncTensorParallel, EveryCollectiveBecomesCopyEngineTransfers) {
  // torchtitan's async TP over DTensor's backward: forward, two all-gather -> mm
  // (3 ring steps of S / 4 each) and two mm -> reduce-scatter (3 chunks copied to
  // their owners, S / 4 each); backward the same four with the roles swapped. 24
  // copies of S / 4 a layer, on the copy engines; no NCCL collective is left.
  const auto built = build(kAsync, kDTensor);
  const auto c = layer_traffic(built.graph);
  ASSERT_EQ(c.size(), 1U);
  const Traffic& copies = c.at(net::CollectiveKind::kSendRecv);
  EXPECT_EQ(copies.count, 24);
  EXPECT_EQ(copies.copy_engine, 24);
  EXPECT_DOUBLE_EQ(copies.bytes, 24 * kActivation / 4);
}

TEST(AsyncTensorParallel, TheRankSumsItsShardAfterTheCopies) {
  // fused_matmul_reduce_scatter: the sum reads the t = 4 partial shards and writes one,
  // (t + 1) S / t bytes, once the 3 copies are in; the data gradient's sum likewise,
  // after the weight gradient.
  const auto built = build(kAsync, kDTensor);
  const workload::TaskGraph& g = built.graph;
  const auto& sum = task_named(g, "layer0.attn_g.reduce");
  EXPECT_DOUBLE_EQ(g.work(sum).compute.bytes, 5.0 * kActivation / 4);
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(waits_for(g, sum, task_named(g, "layer0.attn_g.copy" + std::to_string(i))));
  EXPECT_DOUBLE_EQ(g.work(task_named(g, "layer0.attn_out_proj.chunk2")).compute.flops, 2.0 * 256 * 1024 * 256);
  const auto& data_sum = task_named(g, "layer0.mlp_f.reduce.backward");
  EXPECT_TRUE(waits_for(g, data_sum, task_named(g, "layer0.mlp_f.copy2.backward")));
  EXPECT_DOUBLE_EQ(g.work(task_named(g, "layer0.mlp_up.data_gradient.chunk3.backward")).compute.flops,
                   2.0 * 256 * 1024 * 1024);
  const auto plain = build(R"("tp": 4, "sequence_parallel": true)", kDTensor);
  EXPECT_DOUBLE_EQ(layer_flops(g), layer_flops(plain.graph));
}

TEST(TpCommOverlap, NeedsSequenceParallelism) {
  EXPECT_THROW(build(R"("tp": 4, "tp_comm_overlap": true)"), scenario::ScenarioError);
  EXPECT_THROW(build(R"("tp": 1, "sequence_parallel": false, "tp_comm_overlap": true)"), scenario::ScenarioError);
  EXPECT_THROW(build(R"("tp": 4, "enable_async_tensor_parallel": true)"), scenario::ScenarioError);
}

}  // namespace
}  // namespace trainsim
