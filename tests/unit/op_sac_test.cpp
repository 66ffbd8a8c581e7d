// torchtitan's selective op activation checkpointing (recompute_granularity
// "selective_op"; workload/op_sac.h, docs/model.md "Recomputation") against
// hand-derived numbers.
#include <gtest/gtest.h>

#include <stdexcept>

#include "test_scenarios.h"
#include "workload/memory.h"
#include "workload/op_sac.h"
#include "workload/transformer_ops.h"

namespace trainsim {
namespace {

// A Llama-style block: h 1024, 8 heads of 128, 2 KV groups (kv width 256),
// SwiGLU MLP of 3584, no biases; sequence 512.
const std::string kLlama = R"({"num_layers": 2, "hidden_size": 1024, "num_attention_heads": 8,
                                "num_query_groups": 2, "ffn_hidden_size": 3584, "swiglu": true,
                                "add_bias_linear": false, "normalization": "RMSNorm",
                                "seq_length": 512, "vocab_size": 32000})";

TEST(OpSac, EverySecondMmOfTheBlockIsRecomputed) {
  // torchtitan's order: wq 1, wk 2, wv 3 | wo 4 | w1 5, w3 6 | w2 7; even ones recomputed.
  const auto s = testing::make_scenario(kLlama);
  const auto groups = workload::op_sac_block_linears(s.model, 1.0);
  ASSERT_EQ(groups.size(), 4U);
  ASSERT_EQ(groups[0].size(), 3U);
  EXPECT_TRUE(groups[0][0].saved);
  EXPECT_FALSE(groups[0][1].saved);
  EXPECT_TRUE(groups[0][2].saved);
  EXPECT_EQ(groups[0][1].out, 256.0);  // wk: the KV width
  ASSERT_EQ(groups[1].size(), 1U);
  EXPECT_FALSE(groups[1][0].saved);  // wo
  ASSERT_EQ(groups[2].size(), 2U);
  EXPECT_TRUE(groups[2][0].saved);   // w1
  EXPECT_FALSE(groups[2][1].saved);  // w3
  EXPECT_EQ(groups[2][1].out, 3584.0);
  ASSERT_EQ(groups[3].size(), 1U);
  EXPECT_TRUE(groups[3][0].saved);  // w2
  // Tensor parallelism splits the column-parallel outputs and the row-parallel inputs.
  const auto split = workload::op_sac_block_linears(s.model, 2.0);
  EXPECT_EQ(split[0][0].out, 512.0);
  EXPECT_EQ(split[1][0].in, 512.0);
  EXPECT_EQ(split[3][0].in, 1792.0);
  EXPECT_EQ(split[3][0].out, 1024.0);
}

TEST(OpSac, RecomputesTheUnsavedMmsAndEveryMemoryBoundKernelButNotAttention) {
  const auto s = testing::make_scenario(kLlama, R"("micro_batch_size": 2)");
  const workload::TransformerOps ops(s.model, s.training, 2);
  double gemm_flops = 0.0;
  double memory_bytes = 0.0;
  int attention = 0;
  for (const auto& op : ops.layer_recompute(0, workload::Recompute::kSelectiveOp)) {
    EXPECT_EQ(op.model_flops, 0.0);
    if (op.work.kind == hw::KernelClass::kMatmul) gemm_flops += op.work.flops;
    if (op.work.kind == hw::KernelClass::kMemoryBound) memory_bytes += op.work.bytes;
    if (op.work.kind == hw::KernelClass::kAttention) ++attention;
  }
  // t = 2 x 512 tokens: wk 2 t h kv + wo 2 t h h + w3 2 t h f.
  const double t = 1024.0;
  EXPECT_DOUBLE_EQ(gemm_flops, 2.0 * t * 1024 * 256 + 2.0 * t * 1024 * 1024 + 2.0 * t * 1024 * 3584);
  EXPECT_EQ(attention, 0);
  double forward_memory = 0.0;
  for (const auto& op : ops.layer_forward(0))
    if (op.work.kind == hw::KernelClass::kMemoryBound) forward_memory += op.work.bytes;
  EXPECT_DOUBLE_EQ(memory_bytes, forward_memory);
}

TEST(OpSac, KeepsTheBlockInputTheSavedMmOutputsAndTheAttentionOutput) {
  // Per layer, bf16 (e = 2), s b = 1024 tokens: input h + wq q + wv kv + w1 f + w2 h +
  // attention output q, plus 4 bytes of log-sum-exp per head and token.
  const auto s = testing::make_scenario(kLlama, R"("micro_batch_size": 2)");
  const double sb = 1024.0;
  const double expected = 2.0 * sb * (1024 + 1024 + 256 + 3584 + 1024 + 1024) + 4.0 * 8 * sb;
  EXPECT_DOUBLE_EQ(workload::layer_activation_bytes(s.model, s.training, workload::Recompute::kSelectiveOp, 2),
                   expected);
  // What the recomputation brings back during the layer's backward: the rest.
  const double none = workload::layer_activation_bytes(s.model, s.training, workload::Recompute::kNone, 2);
  EXPECT_DOUBLE_EQ(workload::recomputed_activation_bytes(s.model, s.training, workload::Recompute::kSelectiveOp, 2,
                                                         workload::ActivationSplit{}),
                   none - expected);
}

TEST(OpSac, TheReaderRefusesBlocksItIsNotModeledFor) {
  EXPECT_NO_THROW(testing::make_scenario(kLlama, "", R"("recompute_granularity": "selective_op")"));
  try {
    (void)testing::make_scenario(testing::kMoe, "", R"("recompute_granularity": "selective_op")");
    FAIL() << "a MoE model with selective_op was accepted";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("/parallelism/recompute_granularity"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("a MoE model"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace trainsim
