// What TransformerOps tells a calibration profile about each op: one GEMM's
// shape, whether it is a backward pass, and which measured kernel does the work
// (docs/model.md, "Calibrated costs").
#include <gtest/gtest.h>
#include <string>
#include <vector>

#include "test_scenarios.h"
#include "workload/transformer_ops.h"

namespace trainsim {
namespace {

using hw::KernelId;

const workload::Op& find(const std::vector<workload::Op>& ops, const std::string& name) {
  for (const workload::Op& op : ops)
    if (op.name == name) return op;
  throw std::runtime_error("no op " + name);
}

TEST(KernelIdentity, Gpt2OpsCarryTheirGemmShapesAndKernels) {
  // gpt2-124m, micro-batch 2: t = 2 x 1024 tokens, h = 768, head dimension 64.
  const auto s = testing::make_scenario("\"gpt2-124m\"", R"("micro_batch_size": 2)");
  const workload::TransformerOps ops(s.model, s.training, 2);
  const std::vector<workload::Op> fwd = ops.layer_forward(0);
  const hw::KernelWork& qkv = find(fwd, "layer0.qkv_proj").work;
  EXPECT_EQ(qkv.m, 2048.0);
  EXPECT_EQ(qkv.n, 2304.0);
  EXPECT_EQ(qkv.k, 768.0);
  EXPECT_FALSE(qkv.backward);
  EXPECT_EQ(find(fwd, "layer0.mlp_down").work.k, 3072.0);
  EXPECT_EQ(find(fwd, "layer0.input_norm").work.kernel, KernelId::kLayernormForward);
  EXPECT_EQ(find(fwd, "layer0.post_attn_norm").work.kernel, KernelId::kLayernormForward);
  EXPECT_EQ(find(fwd, "layer0.attn_residual").work.kernel, KernelId::kResidualForward);
  EXPECT_EQ(find(fwd, "layer0.mlp_act").work.kernel, KernelId::kGeluForward);
  const hw::KernelWork& attention = find(fwd, "layer0.attention").work;
  EXPECT_EQ(attention.kernel, KernelId::kAttentionForward);
  EXPECT_EQ(attention.head_dim, 64);

  const std::vector<workload::Op> bwd = ops.layer_backward(0);
  const hw::KernelWork& qkv_bwd = find(bwd, "layer0.qkv_proj.backward").work;
  EXPECT_TRUE(qkv_bwd.backward);
  EXPECT_EQ(qkv_bwd.m, 2048.0);  // the forward GEMM's shape; the profile looks up both gradients
  EXPECT_EQ(find(bwd, "layer0.input_norm.backward").work.kernel, KernelId::kLayernormBackward);
  EXPECT_EQ(find(bwd, "layer0.mlp_act.backward").work.kernel, KernelId::kGeluBackward);
  EXPECT_EQ(find(bwd, "layer0.attention.backward").work.kernel, KernelId::kAttentionBackward);
  // The residual add's backward passes the gradient on: no kernel of ours.
  EXPECT_EQ(find(bwd, "layer0.attn_residual.backward").work.kernel, KernelId::kNone);

  EXPECT_EQ(ops.embedding_forward().front().work.kernel, KernelId::kEmbeddingForward);
  EXPECT_EQ(ops.embedding_backward().front().work.kernel, KernelId::kEmbeddingBackward);
  EXPECT_EQ(find(ops.head_forward(), "final_norm").work.kernel, KernelId::kLayernormForward);
  EXPECT_EQ(find(ops.head_forward(), "loss").work.kernel, KernelId::kSoftmaxCrossEntropy);
  EXPECT_EQ(find(ops.head_backward(), "loss.backward").work.kernel, KernelId::kSoftmaxCrossEntropy);
  EXPECT_EQ(find(ops.head_forward(), "output_layer").work.n, 50257.0);
  EXPECT_EQ(ops.optimizer_step(1e6).work.kernel, KernelId::kAdamw);
}

TEST(KernelIdentity, OpsWithoutAMeasuredKernel) {
  // SwiGLU (llama3-8b), SGD, unfused attention.
  const auto s = testing::make_scenario("\"llama3-8b\"", R"("micro_batch_size": 1, "optimizer": "sgd",
                                        "attention_backend": "unfused")");
  const workload::TransformerOps ops(s.model, s.training, 1);
  const std::vector<workload::Op> fwd = ops.layer_forward(0);
  EXPECT_EQ(find(fwd, "layer0.mlp_act").work.kernel, KernelId::kNone);
  EXPECT_EQ(find(fwd, "layer0.input_norm").work.kernel, KernelId::kLayernormForward);  // RMSNorm too
  const hw::KernelWork& scores = find(fwd, "layer0.attention.scores").work;
  EXPECT_EQ(scores.kernel, KernelId::kNone);
  EXPECT_EQ(scores.m, 0.0);
  EXPECT_EQ(find(fwd, "layer0.attention.softmax").work.kernel, KernelId::kNone);
  EXPECT_EQ(ops.optimizer_step(1e6).work.kernel, KernelId::kNone);
}

}  // namespace
}  // namespace trainsim
