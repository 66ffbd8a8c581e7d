// torchtitan's Llama block run eager (training.compile false; docs/model.md,
// "torchtitan's Llama eager"): its elementwise ops' bytes against hand counts of the
// kernels its code and autograd launch, and the reader's refusals.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "scenario/errors.h"
#include "test_scenarios.h"
#include "workload/transformer_ops.h"

namespace trainsim {
namespace {

// h 1024, 8 heads of 128, 2 KV groups (kv width 256), SwiGLU of 3584, bf16; 2 x 512 tokens.
const std::string kLlama = R"({"num_layers": 2, "hidden_size": 1024, "num_attention_heads": 8,
                                "num_query_groups": 2, "ffn_hidden_size": 3584, "swiglu": true,
                                "add_bias_linear": false, "normalization": "RMSNorm",
                                "position_embedding_type": "rope", "seq_length": 512, "vocab_size": 32000})";
constexpr double kT = 1024.0;  // tokens
constexpr double kH = 1024.0;
constexpr double kQ = 1024.0;
constexpr double kKv = 256.0;
constexpr double kF = 3584.0;

// name (less the layer prefix) -> op
std::map<std::string, workload::Op> by_name(const std::vector<workload::Op>& ops) {
  std::map<std::string, workload::Op> out;
  for (const workload::Op& op : ops) out[op.name.substr(op.name.find('.') + 1)] = op;
  return out;
}

TEST(LlamaEager, EachElementwiseFunctionMovesTheBytesOfItsKernels) {
  const auto s = testing::make_scenario(kLlama, R"("micro_batch_size": 2, "compile": false)");
  ASSERT_FALSE(s.training.torch_compile);
  const workload::TransformerOps ops(s.model, s.training, 2);
  const auto fwd = by_name(ops.layer_forward(0));
  // RMSNorm, bf16 (e = 2): forward 4e + 28 = 36 bytes an element; backward 8e + 76 = 92,
  // plus the sums of its readers' input gradients, 3e = 6 bytes an element each after
  // the first (input_norm: wq, wk, wv; post_attn_norm: w1, w3).
  EXPECT_DOUBLE_EQ(fwd.at("input_norm").work.bytes, 36.0 * kT * kH);
  EXPECT_DOUBLE_EQ(*fwd.at("input_norm").backward_bytes, 92.0 * kT * kH + 2.0 * 6.0 * kT * kH);
  EXPECT_DOUBLE_EQ(*fwd.at("post_attn_norm").backward_bytes, 92.0 * kT * kH + 6.0 * kT * kH);
  // Rotary embeddings: 2e + 16 = 20 bytes an element, each way; repeat_kv: e (kv + q).
  EXPECT_DOUBLE_EQ(fwd.at("rotary_q").work.bytes, 20.0 * kT * kQ);
  EXPECT_DOUBLE_EQ(fwd.at("rotary_k").work.bytes, 20.0 * kT * kKv);
  EXPECT_DOUBLE_EQ(*fwd.at("rotary_k").backward_bytes, 20.0 * kT * kKv);
  EXPECT_DOUBLE_EQ(fwd.at("repeat_v").work.bytes, 2.0 * kT * (kKv + kQ));
  // SwiGLU: 5e forward, 9e backward per element of f; residual 3e each way.
  EXPECT_DOUBLE_EQ(fwd.at("mlp_act").work.bytes, 10.0 * kT * kF);
  EXPECT_DOUBLE_EQ(*fwd.at("mlp_act").backward_bytes, 18.0 * kT * kF);
  EXPECT_DOUBLE_EQ(fwd.at("mlp_residual").work.bytes, 6.0 * kT * kH);
  EXPECT_DOUBLE_EQ(*fwd.at("attn_residual").backward_bytes, 6.0 * kT * kH);
  for (const auto& [name, op] : fwd) {
    if (op.work.kind == hw::KernelClass::kMemoryBound) {
      EXPECT_EQ(op.kernel_class, "other") << name;
    }
  }
  // The backward pass takes them: 2 x 92 + 12 + 6 + 2 x 6 bytes per T h element, 20 per
  // T q and T kv, 2 x 2 (kv + q), 18 per T f.
  double backward = 0.0;
  for (const workload::Op& op : ops.layer_backward(0))
    if (op.work.kind == hw::KernelClass::kMemoryBound) backward += op.work.bytes;
  EXPECT_DOUBLE_EQ(backward, (184.0 + 12.0 + 6.0 + 12.0) * kT * kH + 20.0 * kT * (kQ + kKv) +
                                 4.0 * kT * (kKv + kQ) + 18.0 * kT * kF);
  // The compiled block's norm is one fused kernel: read and write t h once.
  const auto compiled = testing::make_scenario(kLlama, R"("micro_batch_size": 2)");
  const auto fused = by_name(workload::TransformerOps(compiled.model, compiled.training, 2).layer_forward(0));
  EXPECT_DOUBLE_EQ(fused.at("input_norm").work.bytes, 4.0 * kT * kH);
  EXPECT_EQ(fused.count("rotary_q"), 0U);
}

TEST(LlamaEager, TensorParallelismSplitsTheHeadsAndSequenceParallelismTheNorms) {
  const auto s = testing::make_scenario(kLlama, R"("micro_batch_size": 2, "compile": false)");
  const workload::TransformerOps ops(s.model, s.training, 2, 2, true);
  const auto fwd = by_name(ops.layer_forward(0));
  EXPECT_DOUBLE_EQ(fwd.at("input_norm").work.bytes, 36.0 * kT * kH / 2.0);
  // The readers' gradients are summed over every token, before the reduce-scatter.
  EXPECT_DOUBLE_EQ(*fwd.at("input_norm").backward_bytes, 92.0 * kT * kH / 2.0 + 12.0 * kT * kH);
  EXPECT_DOUBLE_EQ(fwd.at("rotary_q").work.bytes, 20.0 * kT * kQ / 2.0);
  EXPECT_DOUBLE_EQ(fwd.at("rotary_k").work.bytes, 20.0 * kT * kKv / 2.0);
  EXPECT_DOUBLE_EQ(fwd.at("mlp_act").work.bytes, 10.0 * kT * kF / 2.0);
}

TEST(LlamaEager, TheReaderRefusesModelsItsCodeDoesNotDescribe) {
  const auto error = [](const std::string& model, const std::string& training) {
    return testing::scenario_error(model, training);
  };
  const std::string gelu = R"({"num_layers": 2, "hidden_size": 1024, "num_attention_heads": 8,
                               "ffn_hidden_size": 4096, "seq_length": 512, "vocab_size": 32000})";
  const std::string e = error(gelu, R"("compile": false)");
  EXPECT_NE(e.find("/training/compile"), std::string::npos) << e;
  EXPECT_NE(e.find("RMSNorm"), std::string::npos) << e;
  const std::string f = error(kLlama, R"("compile": false, "framework": "pytorch_eager")");
  EXPECT_NE(f.find("compile"), std::string::npos) << f;
}

}  // namespace
}  // namespace trainsim
