// Parameter counts of every model preset against the published counts.
#include <gtest/gtest.h>

#include "scenario/presets.h"
#include "test_scenarios.h"
#include "workload/parameters.h"

namespace trainsim {
namespace {

double count(const std::string& preset) {
  return workload::count_parameters(testing::make_scenario("\"" + preset + "\"").model).total;
}

// Exact counts of the released checkpoints (sum of tensor sizes), as cited in
// scenarios/models/*.json.
TEST(Parameters, Gpt2SmallMatchesReleasedCheckpointExactly) {
  // wte 50257*768 + wpe 1024*768 + 12 * 7,087,872 per block + ln_f 2*768
  EXPECT_EQ(count("gpt2-124m"), 124'439'808.0);
}

TEST(Parameters, Gpt2MediumMatchesReleasedCheckpointExactly) { EXPECT_EQ(count("gpt2-350m"), 354'823'168.0); }

TEST(Parameters, LlamaThreeMatchesReleasedCheckpointsExactly) {
  // 8B: 32 * (41,943,040 attention + 176,160,768 SwiGLU + 8,192 norms) + 2 * 128256*4096 + 4096
  EXPECT_EQ(count("llama3-8b"), 8'030'261'248.0);
  EXPECT_EQ(count("llama3-70b"), 70'553'706'496.0);
  EXPECT_EQ(count("llama3-405b"), 405'853'388'800.0);
}

TEST(Parameters, QkNormAddsTwoHeadDimNormsPerLayer) {
  // Qwen3-8B (Qwen/Qwen3-8B config.json: 36 layers, hidden 4096, 32 heads, 8 KV heads,
  // head_dim 128, intermediate 12288, vocab 151936, untied, RMSNorm, qk_norm): per layer
  // 41,943,040 attention + 2 x 128 QK-norm + 150,994,944 SwiGLU + 8,192 norms, two
  // 151936 x 4096 embeddings and the final norm: 8,190,735,360, the model card's 8.2B
  // (6.95B without the embeddings).
  const std::string qwen3 =
      R"({"num_layers": 36, "hidden_size": 4096, "num_attention_heads": 32, "num_query_groups": 8,
          "kv_channels": 128, "ffn_hidden_size": 12288, "vocab_size": 151936, "seq_length": 4096,
          "swiglu": true, "untie_embeddings": true, "normalization": "RMSNorm", "position_embedding_type": "rope",
          "add_bias_linear": false, "qk_layernorm": true})";
  const workload::ModelConfig m = testing::make_scenario(qwen3).model;
  EXPECT_EQ(workload::count_parameters(m).total, 8'190'735'360.0);
  EXPECT_EQ(workload::qk_norm_parameters(m), 256.0);
  workload::ModelConfig without = m;
  without.qk_layernorm = false;
  EXPECT_EQ(workload::count_parameters(without).total, 8'190'735'360.0 - 36.0 * 256.0);
}

TEST(Parameters, MixtralCountsEveryExpertAndTheRouter) {
  EXPECT_EQ(count("mixtral-8x7b"), 46'702'792'704.0);
  // Active per token: 2 of 8 experts. 32 layers x 6 unused experts x 3 x 4096 x 14336 fewer.
  const auto c = workload::count_parameters(testing::make_scenario("\"mixtral-8x7b\"").model);
  EXPECT_EQ(c.active_per_token, 46'702'792'704.0 - 32.0 * 6.0 * 3.0 * 4096.0 * 14336.0);
}

// DeepSeek-V3 (technical report, section 4.2; its config.json), by hand:
//   attention per layer: q down 7168 x 1536 = 11,010,048, kv down 7168 x 576 =
//   4,128,768, q up 1536 x 128 x 192 = 37,748,736, kv up 512 x 128 x 256 =
//   16,777,216, output 16384 x 7168 = 117,440,512, latent norms 1536 + 512:
//   187,107,328, x 61 layers = 11,413,547,008;
//   3 dense MLPs of 3 x 7168 x 18432 = 1,189,085,184;
//   58 MoE MLPs of 256 x 44,040,192 routed + 44,040,192 shared + 1,835,008 router
//   = 656,569,532,416; norms 61 x 14,336 = 874,496; embeddings and output
//   2 x 129280 x 7168 = 1,853,358,080; final norm 7,168.
// Total 671,026,404,352 ("671B"); active 37,552,282,624 ("37B"): 58 x 248 idle experts fewer.
TEST(Parameters, DeepSeekV3CountsLatentAttentionDenseLayersAndSharedExperts) {
  const auto c = workload::count_parameters(testing::make_scenario("\"deepseek-v3\"").model);
  EXPECT_EQ(c.attention_per_layer, 187'107'328.0);
  EXPECT_EQ(c.total, 671'026'404'352.0);
  EXPECT_EQ(c.active_per_token, 671'026'404'352.0 - 58.0 * 248.0 * 44'040'192.0);
}

TEST(Parameters, Gpt3IsWithinRoundingOfThePublished175B) {
  // Brown et al. 2020 Table 2.1 rounds to 175.0B; the architecture gives 174.6B:
  // 12 l h^2 + 13 l h + V h + s h + 2 h with l=96, h=12288, V=50257, s=2048.
  const double l = 96, h = 12288, v = 50257, s = 2048;
  const double exact = 12 * l * h * h + 13 * l * h + v * h + s * h + 2 * h;
  EXPECT_EQ(count("gpt3-175b"), exact);
  EXPECT_NEAR(count("gpt3-175b") / 175.0e9, 1.0, 0.005);
}

TEST(Parameters, EveryPresetMatchesItsPublishedCount) {
  for (const std::string& name : scenario::preset_names(scenario::PresetKind::kModel)) {
    SCOPED_TRACE(name);
    const auto model = testing::make_scenario("\"" + name + "\"").model;
    ASSERT_TRUE(model.published_parameters.has_value());
    EXPECT_NEAR(workload::count_parameters(model).total / *model.published_parameters, 1.0, 0.005);
  }
}

}  // namespace
}  // namespace trainsim
