// Memory per GPU against the ZeRO paper and Korthikanti et al. (2022).
#include <gtest/gtest.h>

#include "test_scenarios.h"
#include "workload/memory.h"
#include "workload/parameters.h"

namespace trainsim {
namespace {

TEST(Memory, MixedPrecisionAdamIs16BytesPerParameter) {
  // Rajbhandari et al. (ZeRO), section 3.1: 2 + 2 + 12 bytes with 16-bit gradients.
  const auto s = testing::make_scenario("\"gpt2-124m\"", R"("grad_reduce_dtype": "bf16")");
  const auto per = workload::state_bytes_per_parameter(s.training);
  EXPECT_EQ(per.weights + per.gradients + per.optimizer, 16.0);
  const auto est = workload::estimate_memory(s.model, s.training, s.parallel);
  EXPECT_EQ(est.weights + est.gradients + est.optimizer_states, 16.0 * 124'439'808.0);
}

TEST(Memory, MegatronFp32MainGradientsMake18BytesPerParameter) {
  // bf16 defaults to fp32 gradient accumulation (Megatron-LM's theoretical memory: 18).
  const auto s = testing::make_scenario("\"gpt2-124m\"");
  const auto per = workload::state_bytes_per_parameter(s.training);
  EXPECT_EQ(per.weights + per.gradients + per.optimizer, 18.0);
}

// GPT-style layer with MHA, ffn = 4h and dropout: Korthikanti et al. Table 2,
// no parallelism: s b h (34 + 5 a s / h) bytes per layer.
TEST(Memory, LayerActivationsMatchKorthikantiTable2) {
  const std::string model = R"({"num_layers": 2, "hidden_size": 512, "num_attention_heads": 8,
                                 "seq_length": 256, "vocab_size": 1000})";
  const auto s = testing::make_scenario(model, R"("attention_backend": "unfused")");
  const double sq = 256, b = 4, h = 512, a = 8;
  EXPECT_DOUBLE_EQ(workload::layer_activation_bytes(s.model, s.training, workload::Recompute::kNone, 4),
                   sq * b * h * (34 + 5 * a * sq / h));
  EXPECT_DOUBLE_EQ(workload::layer_activation_bytes(s.model, s.training, workload::Recompute::kSelective, 4),
                   sq * b * h * 34);
  EXPECT_DOUBLE_EQ(workload::layer_activation_bytes(s.model, s.training, workload::Recompute::kFull, 4),
                   sq * b * h * 2);
}

TEST(Memory, FlashAttentionKeepsNoScoresOnlyTheLogSumExp) {
  const std::string model = R"({"num_layers": 2, "hidden_size": 512, "num_attention_heads": 8,
                                 "seq_length": 256, "vocab_size": 1000})";
  const auto s = testing::make_scenario(model);
  const double sq = 256, b = 4, h = 512, a = 8;
  EXPECT_DOUBLE_EQ(workload::layer_activation_bytes(s.model, s.training, workload::Recompute::kNone, 4),
                   sq * b * h * 34 + 4 * a * sq * b);
}

TEST(Memory, PyTorchsCrossEntropyAddsItsBackwardsTwoFp32TensorsOverTheVocabularyShard) {
  // Split over t = 2 tensor ranks: 8 b s V / t beside the saved fp32 log-probs.
  const std::string model = R"({"num_layers": 3, "hidden_size": 128, "num_attention_heads": 2,
                                 "seq_length": 64, "vocab_size": 500})";
  const auto torch = testing::make_scenario(model, R"("micro_batch_size": 2, "cross_entropy": "torch")", R"("tp": 2)");
  const auto megatron = testing::make_scenario(model, R"("micro_batch_size": 2, "cross_entropy": "unfused")", R"("tp": 2)");
  EXPECT_DOUBLE_EQ(workload::loss_backward_transient_bytes(torch.model, torch.training, 2, {2, false, 1}),
                   8.0 * 128 * 500 / 2);
  EXPECT_DOUBLE_EQ(workload::loss_backward_transient_bytes(megatron.model, megatron.training, 2, {2, false, 1}), 0.0);
  EXPECT_DOUBLE_EQ(workload::estimate_memory(torch.model, torch.training, torch.parallel).activations -
                       workload::estimate_memory(megatron.model, megatron.training, megatron.parallel).activations,
                   8.0 * 128 * 500 / 2);
}

TEST(Memory, PeakAddsOneMicroBatchAndTheOutputLayer) {
  const std::string model = R"({"num_layers": 3, "hidden_size": 128, "num_attention_heads": 2,
                                 "seq_length": 64, "vocab_size": 500})";
  const auto s = testing::make_scenario(model, R"("micro_batch_size": 2)", R"("recompute_granularity": "full")");
  const auto est = workload::estimate_memory(s.model, s.training, s.parallel);
  const double sb = 64 * 2, h = 128, v = 500;
  // 3 layer inputs + one layer recomputed in full + mask, two 16-bit inputs, fp32 softmax.
  const double layer_full = workload::layer_activation_bytes(s.model, s.training, workload::Recompute::kNone, 2);
  EXPECT_DOUBLE_EQ(est.activations, 3 * 2 * sb * h + layer_full + sb * h + 2 * 2 * sb * h + 4 * sb * v);
}

}  // namespace
}  // namespace trainsim
