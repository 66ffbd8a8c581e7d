// Model FLOPs against hand-derived closed forms.
#include <gtest/gtest.h>

#include "test_scenarios.h"
#include "workload/iteration_builder.h"
#include "workload/transformer_ops.h"

namespace trainsim {
namespace {

TEST(Flops, Gpt2SmallPerTokenIs72lh2Plus12lshPlus6hV) {
  const auto s = testing::make_scenario("\"gpt2-124m\"", "\"micro_batch_size\": 1");
  const workload::TransformerOps ops(s.model, s.training, 1);
  // Per token, forward + backward, no recomputation: 3 x (l (24 h^2 + 4 s h) + 2 h V)
  // = 72*12*768^2 + 12*12*1024*768 + 6*768*50257 = 509,607,936 + 113,246,208 + 231,584,256.
  EXPECT_EQ(ops.model_flops_per_microbatch() / 1024.0, 854'438'400.0);
}

// With unfused attention and full recomputation the executed FLOPs of an
// iteration are exactly Narayanan et al. (SC'21) eq. 3:
// 96 B s l h^2 (1 + s/(6h) + V/(16 l h)).
TEST(Flops, ExecutedFlopsWithFullRecomputeMatchMegatronEquation3) {
  const std::string model = R"({"num_layers": 4, "hidden_size": 256, "num_attention_heads": 4,
                                 "seq_length": 128, "vocab_size": 1000, "add_bias_linear": false})";
  const auto s = testing::make_scenario(model, R"("micro_batch_size": 2, "attention_backend": "unfused")",
                                        R"("recompute_granularity": "full")");
  const auto g = workload::build_iteration_graph(s.model, s.training, s.parallel, s.cluster, 1);
  double matmul = 0.0;
  for (const workload::Task& t : g.graph.tasks()) {
    const workload::Work& w = g.graph.work(t);
    if (!w.collective && w.compute.kind != hw::KernelClass::kMemoryBound) matmul += w.compute.flops;
  }
  // The graph holds one representative replica: scale by the data-parallel size.
  matmul *= s.parallel.data;
  const double B = 64, sq = 128, l = 4, h = 256, V = 1000;
  EXPECT_DOUBLE_EQ(matmul, 96 * B * sq * l * h * h * (1 + sq / (6 * h) + V / (16 * l * h)));
  // Model FLOPs leave recomputation out: 72 for the layers, 6 B s h V for the logits.
  EXPECT_DOUBLE_EQ(g.model_flops_per_iteration, 72 * B * sq * l * h * h * (1 + sq / (6 * h)) + 6 * B * sq * h * V);
}

TEST(Flops, FlashAttentionExecutesHalfTheCausalScoresButModelFlopsCountAll) {
  const std::string model = R"({"num_layers": 1, "hidden_size": 64, "num_attention_heads": 2,
                                 "seq_length": 32, "vocab_size": 10})";
  const auto s = testing::make_scenario(model);
  const workload::TransformerOps ops(s.model, s.training, 1);
  for (const auto& op : ops.layer_forward(0)) {
    if (op.work.kind != hw::KernelClass::kAttention) continue;
    EXPECT_DOUBLE_EQ(op.model_flops, 4.0 * 32 * 32 * 64);
    EXPECT_DOUBLE_EQ(op.work.flops, 2.0 * 32 * 32 * 64);
  }
  for (const auto& op : ops.layer_backward(0))
    if (op.work.kind == hw::KernelClass::kAttention) {
      EXPECT_DOUBLE_EQ(op.work.flops, 2.5 * 2.0 * 32 * 32 * 64);
    }
}

}  // namespace
}  // namespace trainsim
