// Memory traffic of the unfused softmax and of the cross-entropy, kernel by kernel
// (docs/model.md, "Attention core, unfused" and "Outside the layers").
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "scenario/errors.h"
#include "test_scenarios.h"
#include "workload/memory.h"
#include "workload/transformer_ops.h"

namespace trainsim {
namespace {

double bytes_of(const std::vector<workload::Op>& ops, const std::string& name) {
  for (const workload::Op& op : ops)
    if (op.name == name) return op.work.bytes;
  throw std::runtime_error("no op " + name);
}

// gpt2-124m (12 heads, s = 1024, V = 50257, dropout 0.1), micro-batch 2, bf16 (e = 2):
// b a s^2 = 2 x 12 x 1024^2 = 25,165,824 scores; t V = 2048 x 50257 = 102,926,336 logits.
constexpr double kScores = 25165824.0;
constexpr double kLogits = 102926336.0;

TEST(OpBytes, UnfusedSoftmaxWithDropoutMovesNineBytesForwardAndElevenBackwardPerScore) {
  const auto s = testing::make_scenario("\"gpt2-124m\"", R"("micro_batch_size": 2, "attention_backend": "unfused")");
  const workload::TransformerOps ops(s.model, s.training, 2);
  // Softmax reads and writes (2e), dropout reads, writes and keeps a 1-byte mask (2e + 1).
  EXPECT_DOUBLE_EQ(bytes_of(ops.layer_forward(0), "layer0.attention.softmax"), 9.0 * kScores);
  // Dropout backward reads dy' and the mask, writes dy (2e + 1); softmax backward
  // reads dy and y, writes dx (3e).
  EXPECT_DOUBLE_EQ(bytes_of(ops.layer_backward(0), "layer0.attention.softmax.backward"), 11.0 * kScores);
}

TEST(OpBytes, UnfusedSoftmaxWithoutDropoutMovesFourBytesForwardAndSixBackward) {
  const auto s = testing::make_scenario(R"({"num_layers": 2, "hidden_size": 768, "ffn_hidden_size": 3072,
      "num_attention_heads": 12, "seq_length": 1024, "vocab_size": 50257, "attention_dropout": 0})",
                                        R"("micro_batch_size": 2, "attention_backend": "unfused")");
  const workload::TransformerOps ops(s.model, s.training, 2);
  EXPECT_DOUBLE_EQ(bytes_of(ops.layer_forward(0), "layer0.attention.softmax"), 4.0 * kScores);
  EXPECT_DOUBLE_EQ(bytes_of(ops.layer_backward(0), "layer0.attention.softmax.backward"), 6.0 * kScores);
}

TEST(OpBytes, QkNormReadsAndWritesTheRanksQueriesAndKeysOnce) {
  // 32 heads, 8 KV groups of d = 128 on TP 2: q = 2048, kv = 512 per rank; micro-batch 2
  // of 1024 tokens (t = 2048), bf16: 2 x 2048 x (2048 + 512) x 2 = 20,971,520 bytes, twice
  // that backward (as every norm's backward); weights 2 x 128 (RMSNorm).
  const auto s = testing::make_scenario(
      R"({"num_layers": 2, "hidden_size": 4096, "num_attention_heads": 32, "num_query_groups": 8,
          "ffn_hidden_size": 12288, "seq_length": 1024, "vocab_size": 32000, "swiglu": true,
          "normalization": "RMSNorm", "position_embedding_type": "rope", "qk_layernorm": true})",
      R"("micro_batch_size": 2)");
  const workload::TransformerOps ops(s.model, s.training, 2, 2, false);
  EXPECT_DOUBLE_EQ(bytes_of(ops.layer_forward(1), "layer1.qk_norm"), 20971520.0);
  EXPECT_DOUBLE_EQ(bytes_of(ops.layer_backward(1), "layer1.qk_norm.backward"), 2.0 * 20971520.0);
}

// The same layer's rotary embeddings: t (q + kv) = 2048 x 2560 = 5,242,880 elements a rank.
constexpr const char* kRopeModel =
    R"({"num_layers": 2, "hidden_size": 4096, "num_attention_heads": 32, "num_query_groups": 8,
        "ffn_hidden_size": 12288, "seq_length": 1024, "vocab_size": 32000, "swiglu": true,
        "normalization": "RMSNorm", "position_embedding_type": "rope", "qk_layernorm": true)";

std::size_t index_of(const std::vector<workload::Op>& ops, const std::string& name) {
  for (std::size_t i = 0; i < ops.size(); ++i)
    if (ops[i].name == name) return i;
  throw std::runtime_error("no op " + name);
}

TEST(OpBytes, FusedRopeReadsAndWritesTheQueriesAndKeysOnceAfterTheirNorm) {
  const auto s = testing::make_scenario(std::string(kRopeModel) + "}", R"("micro_batch_size": 2)");
  const workload::TransformerOps ops(s.model, s.training, 2, 2, false);
  const std::vector<workload::Op> fwd = ops.layer_forward(1);
  // 2e x 5,242,880 = 20,971,520 bytes, forward and backward alike.
  EXPECT_DOUBLE_EQ(bytes_of(fwd, "layer1.rope"), 20971520.0);
  EXPECT_DOUBLE_EQ(bytes_of(ops.layer_backward(1), "layer1.rope.backward"), 20971520.0);
  EXPECT_EQ(index_of(fwd, "layer1.rope"), index_of(fwd, "layer1.qk_norm") + 1);
  EXPECT_EQ(index_of(fwd, "layer1.attention"), index_of(fwd, "layer1.rope") + 1);
}

TEST(OpBytes, UnfusedRopeIsTheRotateHalfOpsOnTheRotatedShare) {
  // Forward t cos 2e, negated half e, cat 2e, x sin 2e, sum 3e = 10e; backward g cos 2e,
  // g sin 2e, negated half e, halves joined 2e, the two gradients summed 3e = 10e.
  auto s = testing::make_scenario(std::string(kRopeModel) + "}",
                                  R"("micro_batch_size": 2, "apply_rope_fusion": false)");
  const workload::TransformerOps ops(s.model, s.training, 2, 2, false);
  EXPECT_DOUBLE_EQ(bytes_of(ops.layer_forward(1), "layer1.rope"), 20.0 * 5242880.0);
  EXPECT_DOUBLE_EQ(bytes_of(ops.layer_backward(1), "layer1.rope.backward"), 20.0 * 5242880.0);
  // rotary_percent 0.5: the arithmetic on half of each head (the fused kernel copies the
  // rest, so its bytes do not change).
  s = testing::make_scenario(std::string(kRopeModel) + R"(, "rotary_percent": 0.5})",
                             R"("micro_batch_size": 2, "apply_rope_fusion": false)");
  EXPECT_DOUBLE_EQ(bytes_of(workload::TransformerOps(s.model, s.training, 2, 2, false).layer_forward(1), "layer1.rope"),
                   10.0 * 5242880.0);
}

TEST(OpBytes, NoRopeOpWithLearnedPositionsOrInTorchtitansEagerBlock) {
  const auto has_rope = [](const std::vector<workload::Op>& ops) {
    for (const workload::Op& op : ops)
      if (op.name == "layer0.rope") return true;
    return false;
  };
  const auto gpt = testing::make_scenario("\"gpt2-124m\"", R"("micro_batch_size": 2)");
  EXPECT_FALSE(has_rope(workload::TransformerOps(gpt.model, gpt.training, 2).layer_forward(0)));
  const auto eager = testing::make_scenario(
      R"({"num_layers": 2, "hidden_size": 4096, "num_attention_heads": 32, "num_query_groups": 8,
          "ffn_hidden_size": 12288, "seq_length": 1024, "vocab_size": 32000, "swiglu": true,
          "normalization": "RMSNorm", "position_embedding_type": "rope", "add_bias_linear": false})",
      R"("micro_batch_size": 2, "compile": false)");
  EXPECT_FALSE(has_rope(workload::TransformerOps(eager.model, eager.training, 2).layer_forward(0)));
}

TEST(OpBytes, ApplyRopeFusionIsRefusedWhereNoRopeOpReadsIt) {
  const auto error = [](const std::string& model, const std::string& training) {
    return testing::scenario_error(model, training);
  };
  const std::string learned = error("\"gpt2-124m\"", R"("apply_rope_fusion": true)");
  EXPECT_NE(learned.find("/training/apply_rope_fusion"), std::string::npos) << learned;
  EXPECT_NE(learned.find("rotary position embeddings"), std::string::npos) << learned;
  const std::string eager = error(R"({"num_layers": 2, "hidden_size": 1024, "num_attention_heads": 8,
      "ffn_hidden_size": 4096, "seq_length": 512, "vocab_size": 32000, "normalization": "RMSNorm",
      "swiglu": true, "position_embedding_type": "rope", "add_bias_linear": false})",
                                  R"("apply_rope_fusion": false, "compile": false)");
  EXPECT_NE(eager.find("/training/apply_rope_fusion"), std::string::npos) << eager;
  EXPECT_NE(eager.find("eager programs"), std::string::npos) << eager;
  const std::string mla = error(R"({"num_layers": 2, "hidden_size": 1024, "num_attention_heads": 8,
      "ffn_hidden_size": 4096, "seq_length": 512, "vocab_size": 32000, "normalization": "RMSNorm",
      "swiglu": true, "position_embedding_type": "rope", "multi_latent_attention": true,
      "kv_lora_rank": 128, "qk_head_dim": 64, "qk_pos_emb_head_dim": 32, "v_head_dim": 64})",
                                R"("apply_rope_fusion": false)");
  EXPECT_NE(mla.find("/training/apply_rope_fusion"), std::string::npos) << mla;
  EXPECT_NE(mla.find("mla_rope"), std::string::npos) << mla;
}

TEST(OpBytes, UnfusedSwigluIsSiluThenTheProductAndKeepsSilusOutput) {
  // kRopeModel's MLP without biases: f = 12288 / 2 = 6144 per rank, t = 2048 tokens, e = 2.
  constexpr double kTf = 2048.0 * 6144.0;
  const std::string model = std::string(kRopeModel) + R"(, "add_bias_linear": false})";
  const auto fused = testing::make_scenario(model, R"("micro_batch_size": 2)");
  const auto unfused = testing::make_scenario(model, R"("micro_batch_size": 2, "bias_activation_fusion": false)");
  const workload::TransformerOps ops(unfused.model, unfused.training, 2, 2, false);
  // silu reads and writes f (2e), the product reads two and writes one (3e): 5e.
  EXPECT_DOUBLE_EQ(bytes_of(ops.layer_forward(1), "layer1.mlp_act"), 10.0 * kTf);
  // The product's gradients, g x up and g x silu (3e each), silu's gradient (3e): 9e.
  EXPECT_DOUBLE_EQ(bytes_of(ops.layer_backward(1), "layer1.mlp_act.backward"), 18.0 * kTf);
  // The fused kernel reads gate and up and writes the product: 3e.
  EXPECT_DOUBLE_EQ(
      bytes_of(workload::TransformerOps(fused.model, fused.training, 2, 2, false).layer_forward(1), "layer1.mlp_act"),
      6.0 * kTf);
  // With biases (Megatron's default) their add over gate and up comes first: 4e more.
  const auto biased = testing::make_scenario(std::string(kRopeModel) + "}",
                                             R"("micro_batch_size": 2, "bias_activation_fusion": false)");
  EXPECT_DOUBLE_EQ(
      bytes_of(workload::TransformerOps(biased.model, biased.training, 2, 2, false).layer_forward(1), "layer1.mlp_act"),
      18.0 * kTf);
  // Memory: the product keeps silu's output, e t f more per layer.
  const workload::ActivationSplit split{2, false};
  EXPECT_DOUBLE_EQ(workload::layer_activation_bytes(unfused.model, unfused.training, workload::Recompute::kNone, 2,
                                                    split, 1) -
                       workload::layer_activation_bytes(fused.model, fused.training, workload::Recompute::kNone, 2,
                                                        split, 1),
                   2.0 * kTf);
  const std::string gelu = testing::scenario_error(testing::kDense, R"("bias_activation_fusion": false)");
  EXPECT_NE(gelu.find("/training/bias_activation_fusion"), std::string::npos) << gelu;
  EXPECT_NE(gelu.find("SwiGLU"), std::string::npos) << gelu;
  const std::string moe = testing::scenario_error(testing::kMoe, R"("bias_activation_fusion": false)");
  EXPECT_NE(moe.find("dense models"), std::string::npos) << moe;
}

TEST(OpBytes, FusedCrossEntropyReadsTheLogitsAndWritesFp32Once) {
  const auto s = testing::make_scenario("\"gpt2-124m\"", R"("micro_batch_size": 2)");
  const workload::TransformerOps ops(s.model, s.training, 2);
  EXPECT_DOUBLE_EQ(bytes_of(ops.head_forward(), "loss"), 6.0 * kLogits);            // e + 4
  EXPECT_DOUBLE_EQ(bytes_of(ops.head_backward(), "loss.backward"), 6.0 * kLogits);  // e + 4
}

TEST(OpBytes, UnfusedCrossEntropyIsMegatronsSixFp32Passes) {
  const auto s = testing::make_scenario("\"gpt2-124m\"", R"("micro_batch_size": 2, "cross_entropy": "unfused")");
  const workload::TransformerOps ops(s.model, s.training, 2);
  // cast 2 + 4, max 4, subtract 8, exp 8, sum 4, divide 8.
  EXPECT_DOUBLE_EQ(bytes_of(ops.head_forward(), "loss"), 38.0 * kLogits);
  // scale the saved softmax 8, cast back 4 + 2.
  EXPECT_DOUBLE_EQ(bytes_of(ops.head_backward(), "loss.backward"), 14.0 * kLogits);
}

TEST(OpBytes, PyTorchsCrossEntropyIsACastLogSoftmaxAndNllLoss) {
  const auto s = testing::make_scenario("\"gpt2-124m\"", R"("micro_batch_size": 2, "cross_entropy": "torch")");
  const workload::TransformerOps ops(s.model, s.training, 2);
  // .float() 2 + 4, log_softmax 4 + 4.
  EXPECT_DOUBLE_EQ(bytes_of(ops.head_forward(), "loss"), 14.0 * kLogits);
  // nll_loss_backward's zeros 4, log_softmax_backward_data 4 + 4 + 4, cast back 4 + 2.
  EXPECT_DOUBLE_EQ(bytes_of(ops.head_backward(), "loss.backward"), 22.0 * kLogits);
}

TEST(OpBytes, ComposersTrainingMetricsAreTwoCrossEntropyForwardsWithoutBackward) {
  // LLM Foundry's use_train_metrics: LanguageCrossEntropy and LanguagePerplexity, each
  // a cast (2 + 4) and log_softmax (4 + 4) over the logits: 2 x 14 bytes a logit.
  const auto s = testing::make_scenario("\"gpt2-124m\"", R"("micro_batch_size": 2, "use_train_metrics": true)");
  const workload::TransformerOps ops(s.model, s.training, 2);
  EXPECT_DOUBLE_EQ(bytes_of(ops.head_forward(), "train_metrics"), 2.0 * 14.0 * kLogits);
  for (const workload::Op& op : ops.head_backward()) EXPECT_EQ(op.name.find("train_metrics"), std::string::npos);
  const auto plain = testing::make_scenario("\"gpt2-124m\"", R"("micro_batch_size": 2)");
  for (const workload::Op& op : workload::TransformerOps(plain.model, plain.training, 2).head_forward())
    EXPECT_NE(op.name, "train_metrics");
}

bool has_op(const std::vector<workload::Op>& ops, const std::string& name) {
  for (const workload::Op& op : ops)
    if (op.name == name) return true;
  return false;
}

TEST(OpBytes, Fp8RecipesCastTransposeEachFp8GemmsInputAndOutputGradient) {
  // docs/model.md, "FP8 recipes": gpt2-124m, micro-batch 2: t = 2048 tokens, h = 768,
  // QKV out 2304, MLP 3072; e = 2 (bf16 activations), fp8 elements 1 byte.
  const auto s = testing::make_scenario("\"gpt2-124m\"", R"("micro_batch_size": 2, "precision": "fp8")");
  const workload::TransformerOps ops(s.model, s.training, 2);
  const std::vector<workload::Op> fwd = ops.layer_forward(0);
  const std::vector<workload::Op> bwd = ops.layer_backward(0);
  constexpr double t = 2048.0;
  // LayerNormLinear (QKV, MLP up): the norm wrote the fp8 input, the transpose's byte remains.
  EXPECT_DOUBLE_EQ(bytes_of(fwd, "layer0.qkv_proj.fp8_cast"), t * 768.0 * 1.0);
  EXPECT_DOUBLE_EQ(bytes_of(fwd, "layer0.mlp_up.fp8_cast"), t * 768.0 * 1.0);
  // Linear (attention out, MLP down): read e, write the fp8 copy and its transpose.
  EXPECT_DOUBLE_EQ(bytes_of(fwd, "layer0.attn_out_proj.fp8_cast"), t * 768.0 * 4.0);
  EXPECT_DOUBLE_EQ(bytes_of(fwd, "layer0.mlp_down.fp8_cast"), t * 3072.0 * 4.0);
  // Backward: the output gradient, e + 2 bytes per element of the GEMM's output.
  EXPECT_DOUBLE_EQ(bytes_of(bwd, "layer0.qkv_proj.fp8_cast.backward"), t * 2304.0 * 4.0);
  EXPECT_DOUBLE_EQ(bytes_of(bwd, "layer0.attn_out_proj.fp8_cast.backward"), t * 768.0 * 4.0);
  EXPECT_DOUBLE_EQ(bytes_of(bwd, "layer0.mlp_up.fp8_cast.backward"), t * 3072.0 * 4.0);
  EXPECT_DOUBLE_EQ(bytes_of(bwd, "layer0.mlp_down.fp8_cast.backward"), t * 768.0 * 4.0);
  // The output layer stays in 16 bits: no cast; and bf16 recipes cast nothing.
  EXPECT_FALSE(has_op(ops.head_forward(), "output_layer.fp8_cast"));
  const auto b = testing::make_scenario("\"gpt2-124m\"", R"("micro_batch_size": 2)");
  const workload::TransformerOps bf16(b.model, b.training, 2);
  EXPECT_FALSE(has_op(bf16.layer_forward(0), "layer0.qkv_proj.fp8_cast"));
}

TEST(OpBytes, CurrentScalingReadsEachTensorOnceMoreForItsAmax) {
  // fp8_recipe "tensorwise" (per-tensor current scaling): the amax is computed before
  // the cast. Linear inputs and output gradients: one more read of e = 2 bytes (2e + 2
  // = 6 an element); LayerNormLinear inputs: the norm writes 16 bits (with the amax),
  // the cast reads them and writes fp8 and its transpose (e + 2 = 4) instead of the
  // transpose's byte alone. Same gpt2-124m shapes as above.
  const auto s = testing::make_scenario("\"gpt2-124m\"",
                                        R"("micro_batch_size": 2, "precision": "fp8", "fp8_recipe": "tensorwise")");
  const workload::TransformerOps ops(s.model, s.training, 2);
  const std::vector<workload::Op> fwd = ops.layer_forward(0);
  const std::vector<workload::Op> bwd = ops.layer_backward(0);
  constexpr double t = 2048.0;
  EXPECT_DOUBLE_EQ(bytes_of(fwd, "layer0.qkv_proj.fp8_cast"), t * 768.0 * 4.0);
  EXPECT_DOUBLE_EQ(bytes_of(fwd, "layer0.mlp_up.fp8_cast"), t * 768.0 * 4.0);
  EXPECT_DOUBLE_EQ(bytes_of(fwd, "layer0.attn_out_proj.fp8_cast"), t * 768.0 * 6.0);
  EXPECT_DOUBLE_EQ(bytes_of(fwd, "layer0.mlp_down.fp8_cast"), t * 3072.0 * 6.0);
  EXPECT_DOUBLE_EQ(bytes_of(bwd, "layer0.qkv_proj.fp8_cast.backward"), t * 2304.0 * 6.0);
  EXPECT_DOUBLE_EQ(bytes_of(bwd, "layer0.mlp_down.fp8_cast.backward"), t * 768.0 * 6.0);
  // MXFP8's block scales come out of the cast kernel itself: the delayed recipe's bytes.
  const auto mx = testing::make_scenario("\"gpt2-124m\"",
                                         R"("micro_batch_size": 2, "precision": "fp8", "fp8_recipe": "mxfp8")");
  const workload::TransformerOps mxfp8(mx.model, mx.training, 2);
  EXPECT_DOUBLE_EQ(bytes_of(mxfp8.layer_forward(0), "layer0.attn_out_proj.fp8_cast"), t * 768.0 * 4.0);
}

TEST(OpBytes, Fp4RecipesCastToNvfp4WithItsBlockScales) {
  // docs/model.md, "FP4 recipes": the fp8 recipe's casts with g = 0.5 + 1/16 bytes per
  // NVFP4 element (an E4M3 scale per 16); gpt2-124m on B200, t = 2048, e = 2.
  const auto s = testing::make_scenario("\"gpt2-124m\"", R"("micro_batch_size": 2, "precision": "fp4")", "", 1,
                                        "\"B200\"");
  const workload::TransformerOps ops(s.model, s.training, 2);
  const std::vector<workload::Op> fwd = ops.layer_forward(0);
  const std::vector<workload::Op> bwd = ops.layer_backward(0);
  constexpr double t = 2048.0;
  constexpr double g = 0.5625;
  EXPECT_DOUBLE_EQ(bytes_of(fwd, "layer0.qkv_proj.fp4_cast"), t * 768.0 * g);
  EXPECT_DOUBLE_EQ(bytes_of(fwd, "layer0.attn_out_proj.fp4_cast"), t * 768.0 * (2.0 + 2.0 * g));
  EXPECT_DOUBLE_EQ(bytes_of(bwd, "layer0.mlp_down.fp4_cast.backward"), t * 768.0 * (2.0 + 2.0 * g));
  // The GEMM reads and writes NVFP4 operands: (t k + k n + t n) g for QKV (k 768, n 2304).
  EXPECT_DOUBLE_EQ(bytes_of(fwd, "layer0.qkv_proj"), (t * 768.0 + 768.0 * 2304.0 + t * 2304.0) * g);
  EXPECT_FALSE(has_op(ops.head_forward(), "output_layer.fp4_cast"));
}

TEST(OpBytes, Mxfp4CastsAndGemmsCarryAnE8m0ScalePer32) {
  // OCP MXFP4: g = 0.5 + 1/32 bytes per element. MI355X runs only MXFP4, so it is the
  // default there; on B200 it is asked for.
  constexpr double t = 2048.0;
  constexpr double g = 0.53125;
  for (const auto& [gpu, recipe] : std::vector<std::pair<std::string, std::string>>{
           {"\"MI355X\"", ""}, {"\"B200\"", R"(, "fp4_recipe": "mxfp4")"}}) {
    const auto s = testing::make_scenario("\"gpt2-124m\"", R"("micro_batch_size": 2, "precision": "fp4")" + recipe,
                                          "", 1, gpu);
    EXPECT_EQ(s.training.fp4_recipe, workload::Fp4Recipe::kMxfp4) << gpu;
    const workload::TransformerOps ops(s.model, s.training, 2);
    const std::vector<workload::Op> fwd = ops.layer_forward(0);
    EXPECT_DOUBLE_EQ(bytes_of(fwd, "layer0.qkv_proj.fp4_cast"), t * 768.0 * g);
    EXPECT_DOUBLE_EQ(bytes_of(fwd, "layer0.qkv_proj"), (t * 768.0 + 768.0 * 2304.0 + t * 2304.0) * g);
  }
  // MI355X's matrix cores have no NVFP4: refused, naming the key.
  try {
    (void)testing::make_scenario("\"gpt2-124m\"", R"("precision": "fp4", "fp4_recipe": "nvfp4")", "", 1,
                                 "\"MI355X\"");
    FAIL() << "NVFP4 accepted on MI355X";
  } catch (const scenario::ScenarioError& e) {
    EXPECT_NE(std::string(e.what()).find("/training/fp4_recipe"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("MI355X's tensor cores run fp4 as mxfp4"), std::string::npos) << e.what();
  }
}

TEST(OpBytes, FirstLastLayersBf16KeepTheirGemmsIn16Bits) {
  // Megatron-Core's first_last_layers_bf16 with 2 layers at the start and 1 at the end of
  // gpt2-124m's 12: layers 0, 1 and 11 run their GEMMs in bf16 (operands e = 2 bytes, no
  // casts), layers 2-10 in fp8 (1 byte). QKV (t, 2304, 768) at t = 2048.
  const auto s = testing::make_scenario("\"gpt2-124m\"", R"("micro_batch_size": 2, "precision": "fp8",
      "first_last_layers_bf16": true, "num_layers_at_start_in_bf16": 2)");
  const workload::TransformerOps ops(s.model, s.training, 2);
  constexpr double qkv = 2048.0 * 768.0 + 768.0 * 2304.0 + 2048.0 * 2304.0;
  for (long long l : {0LL, 1LL, 2LL, 10LL, 11LL}) {
    const bool bf16 = l < 2 || l == 11;
    const std::string name = "layer" + std::to_string(l) + ".qkv_proj";
    SCOPED_TRACE(name);
    const std::vector<workload::Op> fwd = ops.layer_forward(l);
    EXPECT_DOUBLE_EQ(bytes_of(fwd, name), qkv * (bf16 ? 2.0 : 1.0));
    EXPECT_EQ(has_op(fwd, name + ".fp8_cast"), !bf16);
  }
}

}  // namespace
}  // namespace trainsim
