// Model features of current published models, against hand-derived numbers
// (docs/model.md, "Parameters", "Multi-head latent attention", "Sliding-window
// attention", "Context and expert parallelism"): DeepSeek's shared experts,
// routed-expert width and dense first layers, multi-head latent attention,
// GPT-OSS's sliding windows and sinks, Nemotron's squared ReLU.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "scenario/errors.h"
#include "test_scenarios.h"
#include "workload/iteration_builder.h"
#include "workload/memory.h"
#include "workload/parameters.h"

namespace trainsim {
namespace {

using testing::kDense;
using testing::kMoe;

// Refused by the scenario reader with a message containing `text`.
void refused(const std::string& model, const std::string& parallelism, const std::string& text) {
  try {
    testing::make_scenario(model, "", parallelism);
    ADD_FAILURE() << model << " was accepted";
  } catch (const scenario::ScenarioError& e) {
    EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
  }
}

// DeepSeek-style experts: routed experts of moe_ffn_hidden_size 512 and shared
// experts of width 1536 beside them (h = 1024, 8 experts top-2, SwiGLU, no biases).
const std::string kShared = kMoe.substr(0, kMoe.size() - 1) +
                            R"(, "moe_ffn_hidden_size": 512, "moe_shared_expert_intermediate_size": 1536})";

TEST(SharedExperts, ParametersCountTheNarrowExpertsAndTheSharedMlp) {
  const auto c = workload::count_parameters(testing::make_scenario(kShared).model);
  // Routed expert 3 x 1024 x 512, shared 3 x 1024 x 1536, router 1024 x 8.
  EXPECT_EQ(c.shared_expert_per_layer, 4'718'592.0);
  EXPECT_EQ(c.mlp_per_layer, 8.0 * 1'572'864.0 + 8'192.0 + 4'718'592.0);
  // A token passes through 2 of the 8 routed experts and the shared ones.
  EXPECT_EQ(c.active_per_token, c.total - 2.0 * 6.0 * 1'572'864.0);
}

TEST(SharedExperts, RunAsATensorParallelMlpAfterTheRoutedExperts) {
  // tp 2 with SP: the shared MLP's up projection computes b s = 1024 tokens x
  // 2 x 1536 / 2 outputs x 1024 inputs, between its own all-gather and reduce-scatter.
  const auto s = testing::make_scenario(kShared, R"("micro_batch_size": 2)", R"("tp": 2, "sequence_parallel": true)");
  const auto g = workload::build_iteration_graph(s.model, s.training, s.parallel, s.cluster, 1);
  std::vector<std::string> names;
  for (const workload::Task& t : g.graph.tasks()) {
    const workload::Work& w = g.graph.work(t);
    if (t.rank != 0 || t.microbatch != 0 || t.layer != 0 || w.name.ends_with(".backward")) continue;
    names.push_back(w.name);
    if (w.name == "layer0.shared_up") {
      EXPECT_DOUBLE_EQ(w.compute.flops, 2.0 * 1024 * 1536 * 1024);
    }
    if (w.name == "layer0.experts_up") {
      EXPECT_DOUBLE_EQ(w.compute.n, 2.0 * 512 / 2);  // routed width 512, split t ways
    }
  }
  const auto at = [&](const std::string& n) { return std::find(names.begin(), names.end(), n) - names.begin(); };
  ASSERT_LT(at("layer0.shared_up"), static_cast<long>(names.size()));
  EXPECT_LT(at("layer0.moe_unpermute"), at("layer0.shared_f"));
  EXPECT_LT(at("layer0.shared_f"), at("layer0.shared_up"));
  EXPECT_LT(at("layer0.shared_down"), at("layer0.shared_g"));
  EXPECT_LT(at("layer0.shared_g"), at("layer0.shared_add"));
}

TEST(SharedExperts, KeepTheirActivationsAndRefuseADenseModel) {
  const auto with = testing::make_scenario(kShared, R"("micro_batch_size": 2)", "");
  workload::ModelConfig without = with.model;
  without.moe_shared_expert_intermediate_size = 0;
  // bf16, b s = 1024 tokens, tp 1: the SwiGLU input (2 x 1536) and the down input (1536).
  EXPECT_DOUBLE_EQ(workload::layer_activation_bytes(with.model, with.training, workload::Recompute::kNone, 2) -
                       workload::layer_activation_bytes(without, with.training, workload::Recompute::kNone, 2),
                   2.0 * 1024 * 3 * 1536);
  try {
    testing::make_scenario(kDense.substr(0, kDense.size() - 1) + R"(, "moe_shared_expert_intermediate_size": 64})");
    ADD_FAILURE() << "a dense model with shared experts was accepted";
  } catch (const scenario::ScenarioError& e) {
    EXPECT_NE(std::string(e.what()).find("moe_shared_expert_intermediate_size needs num_experts"), std::string::npos)
        << e.what();
  }
}

// DeepSeek's first dense layers: layer 0 a dense SwiGLU MLP of ffn_hidden_size 2048,
// layer 1 the MoE MLP.
const std::string kFirstDense = kShared.substr(0, kShared.size() - 1) + R"(, "first_k_dense_replace": 1})";

TEST(DenseLayers, FirstKDenseReplaceCountsADenseMlpForTheFirstLayers) {
  const auto m = testing::make_scenario(kFirstDense).model;
  EXPECT_FALSE(m.is_moe_layer(0));
  EXPECT_TRUE(m.is_moe_layer(1));
  const auto c = workload::count_parameters(m);
  const auto all_moe = workload::count_parameters(testing::make_scenario(kShared).model);
  // One layer's MLP is 3 x 1024 x 2048 = 6,291,456 instead of the MoE MLP's 17,309,696.
  EXPECT_EQ(c.dense_mlp_per_layer, 6'291'456.0);
  EXPECT_EQ(c.total, all_moe.total - 17'309'696.0 + 6'291'456.0);
  EXPECT_EQ(c.active_per_token, c.total - 1.0 * 6.0 * 1'572'864.0);  // one MoE layer, 6 experts idle
}

TEST(DenseLayers, TheDenseLayerRunsTheDenseMlpAndItsStageHoldsIt) {
  const auto s = testing::make_scenario(kFirstDense, R"("micro_batch_size": 2)", R"("pp": 2)");
  const auto g = workload::build_iteration_graph(s.model, s.training, s.parallel, s.cluster, 1);
  int dense_up = 0, routers = 0;
  for (const workload::Task& t : g.graph.tasks()) {
    const workload::Work& w = g.graph.work(t);
    if (t.microbatch != 0 || w.name.ends_with(".backward")) continue;
    if (w.name == "layer0.mlp_up") {
      ++dense_up;
      EXPECT_DOUBLE_EQ(w.compute.flops, 2.0 * 1024 * (2 * 2048) * 1024);
    }
    if (w.name.ends_with(".router")) {
      ++routers;
      EXPECT_EQ(w.name, "layer1.router");
    }
  }
  EXPECT_EQ(dense_up, 1);
  EXPECT_EQ(routers, 1);
  // Stage 0 holds layer 0 (dense), stage 1 layer 1 (MoE): the MLPs differ by
  // 17,309,696 - 6,291,456. Outside the layers, stage 0 has the word embeddings and
  // the learned positions (512 x 1024), stage 1 the tied copy of the word embeddings
  // and the final LayerNorm (2 x 1024).
  EXPECT_DOUBLE_EQ(workload::stage_parameters(s.model, s.parallel, 1) - workload::stage_parameters(s.model, s.parallel, 0),
                   17'309'696.0 - 6'291'456.0 - 512.0 * 1024 + 2048.0);
  EXPECT_DOUBLE_EQ(workload::stage_expert_parameters(s.model, s.parallel, 0), 0.0);
  EXPECT_THROW((void)workload::layer_activation_bytes(s.model, s.training, workload::Recompute::kNone, 2),
               std::logic_error);
}

TEST(DenseLayers, MoeLayerFreqTakesAPeriodOrAList) {
  const std::string four = kMoe.substr(0, kMoe.size() - 1);
  const auto every_other = testing::make_scenario(
      four.substr(0, four.find("\"num_layers\": 2")) + R"("num_layers": 4)" +
      four.substr(four.find("\"num_layers\": 2") + 15) + R"(, "moe_layer_freq": 2})").model;
  EXPECT_EQ(every_other.moe_layer_pattern, (std::vector<bool>{true, false, true, false}));
  EXPECT_EQ(every_other.moe_layers(), 2);
  const auto listed = testing::make_scenario(four + R"(, "moe_layer_freq": [0, 1]})").model;
  EXPECT_EQ(listed.moe_layer_pattern, (std::vector<bool>{false, true}));
  refused(four + R"(, "moe_layer_freq": [1, 0, 1]})", "", "a list of 2 zeros and ones, one per layer");
  refused(four + R"(, "moe_layer_freq": [0, 0]})", "", "every layer dense");
  refused(four + R"(, "moe_layer_freq": 2, "first_k_dense_replace": 1})", "", "not both");
  refused(kDense.substr(0, kDense.size() - 1) + R"(, "first_k_dense_replace": 1})", "", "needs num_experts");
}

// Multi-head latent attention: 8 heads, q_lora 256, kv_lora 128, d_qk 64, d_r 32, d_v 64.
const std::string kLatent = R"({"num_layers": 2, "hidden_size": 1024, "num_attention_heads": 8, "seq_length": 512,
                                 "vocab_size": 32000, "multi_latent_attention": true, "q_lora_rank": 256,
                                 "kv_lora_rank": 128, "qk_head_dim": 64, "qk_pos_emb_head_dim": 32,
                                 "v_head_dim": 64, "qk_layernorm": true, "normalization": "RMSNorm",
                                 "add_bias_linear": false, "swiglu": true, "ffn_hidden_size": 2048})";

TEST(LatentAttention, ProjectsThroughTheLatentsAndAttendsWithItsOwnHeadDims) {
  // tp 2 with SP, b s = 2 x 512 = 1024 tokens, a = 4 heads per rank.
  const auto s = testing::make_scenario(kLatent, R"("micro_batch_size": 2)", R"("tp": 2, "sequence_parallel": true)");
  const auto g = workload::build_iteration_graph(s.model, s.training, s.parallel, s.cluster, 1);
  std::map<std::string, const workload::Work*> fwd;
  for (const workload::Task& t : g.graph.tasks()) {
    const workload::Work& w = g.graph.work(t);
    if (t.rank == 0 && t.microbatch == 0 && t.layer == 0 && !w.name.ends_with(".backward")) fwd[w.name] = &w;
  }
  // Down projections on the rank's 512 tokens, whole; up projections on all 1024.
  EXPECT_DOUBLE_EQ(fwd.at("layer0.q_down_proj")->compute.flops, 2.0 * 512 * 256 * 1024);
  EXPECT_DOUBLE_EQ(fwd.at("layer0.kv_down_proj")->compute.flops, 2.0 * 512 * (128 + 32) * 1024);
  EXPECT_DOUBLE_EQ(fwd.at("layer0.q_up_proj")->compute.flops, 2.0 * 1024 * (4 * 96) * 256);
  EXPECT_DOUBLE_EQ(fwd.at("layer0.kv_up_proj")->compute.flops, 2.0 * 1024 * (4 * 128) * 128);
  EXPECT_DOUBLE_EQ(fwd.at("layer0.attn_out_proj")->compute.flops, 2.0 * 1024 * 1024 * (4 * 64));
  // One all-gather of the latents: 1024 tokens x (256 + 128 + 32) x 2 bytes.
  EXPECT_DOUBLE_EQ(fwd.at("layer0.mla_latents_f")->collective->bytes, 1024.0 * 416 * 2);
  EXPECT_EQ(fwd.count("layer0.attn_f"), 0u);
  EXPECT_EQ(fwd.count("layer0.qkv_proj"), 0u);
  // Flash attention, causal: (2 b s^2 x 4 x 96 for QK^T + 2 b s^2 x 4 x 64 for AV) / 2.
  EXPECT_DOUBLE_EQ(fwd.at("layer0.attention")->compute.flops, (2.0 * 2 * 512 * 512 * (4 * 96 + 4 * 64)) / 2);
  EXPECT_EQ(fwd.at("layer0.attention")->compute.head_dim, 96);
  EXPECT_EQ(fwd.at("layer0.attention")->compute.value_head_dim, 64);
  // Weights: latent attention's down projections and norms whole, the rest split t ways.
  const workload::ParameterCount c = workload::count_parameters(s.model);
  EXPECT_EQ(c.attention_per_layer,
            1024.0 * 256 + 1024.0 * 160 + 256.0 * 8 * 96 + 128.0 * 8 * 128 + 8.0 * 64 * 1024 + 256 + 128);
}

TEST(LatentAttention, ItsKeysNeedItAndItHasNoRing) {
  refused(kDense.substr(0, kDense.size() - 1) + R"(, "kv_lora_rank": 64})", "", "needs \"multi_latent_attention\": true");
  refused(kLatent.substr(0, kLatent.size() - 1) + R"(, "num_query_groups": 2})", "", "has no query groups");
  refused(kLatent, R"("cp": 2, "dp": 4)", "with multi_latent_attention is not modeled");
}

// GPT-OSS-style attention: a window of 128 tokens on layer numbers 1, 3, ... (1-based;
// window_attn_skip_freq 2 keeps every second layer full), attention sinks.
const std::string kWindowed = kDense.substr(0, kDense.size() - 1) +
                              R"(, "window_size": [128, 0], "window_attn_skip_freq": 2, "softmax_type": "learnable"})";

TEST(SlidingWindow, WindowedLayersAttendToTheirWindowOnly) {
  const auto s = testing::make_scenario(kWindowed, R"("micro_batch_size": 2)", "");
  EXPECT_TRUE(s.model.is_window_layer(0));
  EXPECT_FALSE(s.model.is_window_layer(1));
  const auto g = workload::build_iteration_graph(s.model, s.training, s.parallel, s.cluster, 1);
  bool seen0 = false, seen1 = false;
  for (const workload::Task& t : g.graph.tasks()) {
    const workload::Work& w = g.graph.work(t);
    if (t.rank != 0 || t.microbatch != 0) continue;
    // b = 2, h = 1024. Layer 0: each of 512 queries sees itself and up to 128 keys
    // before it: 129 x 130 / 2 + (512 - 129) x 129 = 57,792 pairs per head, x 4 b h.
    if (w.name == "layer0.attention") {
      seen0 = true;
      EXPECT_DOUBLE_EQ(w.compute.flops, 4.0 * 2 * 1024 * 57'792);
      EXPECT_DOUBLE_EQ(w.model_flops, 2.0 * 4.0 * 2 * 1024 * 57'792);
    }
    // Layer 1: causal, half of 4 b s^2 h.
    if (w.name == "layer1.attention") {
      seen1 = true;
      EXPECT_DOUBLE_EQ(w.compute.flops, 0.5 * 4.0 * 2 * 512 * 512 * 1024);
    }
  }
  EXPECT_TRUE(seen0 && seen1);
  // The sinks: one logit per head and layer.
  const auto plain = workload::count_parameters(testing::make_scenario(kDense).model);
  EXPECT_EQ(workload::count_parameters(s.model).total, plain.total + 2.0 * 8);
}

TEST(SlidingWindow, KeysAsMegatronCoreNamesThem) {
  const auto listed = testing::make_scenario(kDense.substr(0, kDense.size() - 1) +
                                             R"(, "window_size": 64, "window_attn_skip_freq": [0, 1]})").model;
  EXPECT_EQ(listed.window_layer_pattern, (std::vector<bool>{false, true}));
  EXPECT_EQ(testing::make_scenario(kDense.substr(0, kDense.size() - 1) + R"(, "window_size": [-1, 0]})")
                .model.attention_window,
            0);
  const std::string dense = kDense.substr(0, kDense.size() - 1);
  refused(dense + R"(, "window_size": [128, 128]})", "", "causal training needs 0");
  refused(dense + R"(, "window_attn_skip_freq": 2})", "", "window_attn_skip_freq needs window_size");
  refused(dense + R"(, "softmax_type": "sparse"})", "", "/model/softmax_type");
  refused(kWindowed, R"("cp": 2, "dp": 4)", "with a sliding window (window_size) is not modeled");
}

// Nemotron-4's MLP: squared ReLU, not gated (h -> f -> h), with no measured kernel of
// its own; rotary_percent and apply_layernorm_1p change no cost.
TEST(SquaredRelu, IsANonGatedMlpWithGeluWeightsAndTraffic) {
  const std::string nemotron = kDense.substr(0, kDense.size() - 1) +
                               R"(, "squared_relu": true, "position_embedding_type": "rope", "rotary_percent": 0.5,
                                   "apply_layernorm_1p": true})";
  const auto s = testing::make_scenario(nemotron, R"("micro_batch_size": 2)", "");
  const auto gelu = testing::make_scenario(
      kDense.substr(0, kDense.size() - 1) + R"(, "position_embedding_type": "rope"})", R"("micro_batch_size": 2)", "");
  EXPECT_EQ(workload::count_parameters(s.model).total, workload::count_parameters(gelu.model).total);
  const auto g = workload::build_iteration_graph(s.model, s.training, s.parallel, s.cluster, 1);
  bool seen = false;
  for (const workload::Task& t : g.graph.tasks()) {
    const workload::Work& w = g.graph.work(t);
    if (t.rank != 0 || t.microbatch != 0 || w.name != "layer0.mlp_act") continue;
    seen = true;
    EXPECT_EQ(w.compute.kernel, hw::KernelId::kNone);
    EXPECT_DOUBLE_EQ(w.compute.bytes, 2.0 * 1024 * 4096 * 2);  // reads and writes b s f = 1024 x 4096, bf16
  }
  EXPECT_TRUE(seen);
  refused(kDense.substr(0, kDense.size() - 1) + R"(, "squared_relu": true, "swiglu": true})", "", "set one");
  refused(kDense.substr(0, kDense.size() - 1) + R"(, "rotary_percent": 0.5})", "", "rotary_percent needs");
  refused(kDense.substr(0, kDense.size() - 1) + R"(, "apply_layernorm_1p": true, "normalization": "RMSNorm"})", "",
          "apply_layernorm_1p needs");
}

}  // namespace
}  // namespace trainsim
