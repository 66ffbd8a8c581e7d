// Memory of a PyTorch eager step (docs/model.md, "Memory of a PyTorch eager
// step"): byte counts of scripts/pytorch-gpt-step.py's tensors for a tiny GPT-2,
// derived by hand below, and the timeline reaching the same peak inside
// log_softmax's backward.
#include <gtest/gtest.h>

#include <string>

#include "execution/simulate.h"
#include "scenario/reader.h"
#include "workload/memory.h"

namespace trainsim {
namespace {

constexpr double kWorkspaces = 2.0 * 32 * 1024 * 1024;  // two cuBLAS handles x 32 MiB (Hopper)

config::Scenario eager_scenario(const std::string& model, int batch) {
  const std::string text = R"({"cluster": {"gpu": "H100-SXM5-80GB", "num_nodes": 1, "gpus_per_node": 1},
    "model": )" + model + R"(, "training": {"global_batch_size": )" +
                           std::to_string(batch) + R"(, "micro_batch_size": )" + std::to_string(batch) +
                           R"(, "precision": "bf16", "optimizer": "adamw", "framework": "pytorch_eager"},
    "parallelism": {"tp": 1, "pp": 1, "dp": 1, "recompute_granularity": "none"}})";
  return scenario::parse_scenario_text(text, "test.json");
}

// L = 2, h = 8, a = 2, f = 32, s = 4, V = 16, tied; b = 2, so T = b s = 8.
const std::string kTiny = R"({"num_layers": 2, "hidden_size": 8, "ffn_hidden_size": 32,
  "num_attention_heads": 2, "seq_length": 4, "max_position_embeddings": 4, "vocab_size": 16,
  "hidden_dropout": 0.0, "attention_dropout": 0.0})";

TEST(EagerMemory, TinyGpt2TensorByTensor) {
  const config::Scenario s = eager_scenario(kTiny, 2);
  const workload::EagerMemory e = workload::eager_memory(s.model, s.training);
  // Per layer 12 h^2 + 13 h = 768 + 104 = 872; 2 layers 1744, wte 16 x 8 = 128,
  // wpe 4 x 8 = 32, ln_f 16: P = 1920.
  EXPECT_DOUBLE_EQ(e.parameters, 1920.0);
  // bf16 casts: 2 x 12 h^2 = 1536 per layer, twice, plus lm_head's 2 V h = 256.
  EXPECT_DOUBLE_EQ(e.layer_casts, 1536.0);
  EXPECT_DOUBLE_EQ(e.weight_casts, 3328.0);
  // Per layer: two norms x (fp32 input 4Th = 256, mean + rstd 8T = 64, bf16
  // output 2Th = 128) = 896; qkv 2T 3h = 384, SDPA output 2Th = 128, logsumexp
  // 4 a T = 64; c_fc output and GELU output 2 x 2Tf = 1024: 2496 (= 20Th + 4Tf
  // + 16T + 4aT).
  EXPECT_DOUBLE_EQ(e.layer_saved, 2496.0);
  // ln_f: input 256, statistics 64, bf16 output 128.
  EXPECT_DOUBLE_EQ(e.head_saved, 448.0);
  // T V = 128 logits: fp32 512, bf16 256.
  EXPECT_DOUBLE_EQ(e.log_probs, 512.0);
  EXPECT_DOUBLE_EQ(e.logits_fp32, 512.0);
  EXPECT_DOUBLE_EQ(e.logits_bf16, 256.0);
  // int64 idx and targets 2 x 8 T = 128, positions 8 s = 32.
  EXPECT_DOUBLE_EQ(e.token_ids, 160.0);
  EXPECT_DOUBLE_EQ(e.workspaces, kWorkspaces);
  EXPECT_DOUBLE_EQ(e.embedding_grad, 4.0 * 16 * 8);
  // In log_softmax's backward: 12 P = 23040 + 3328 + 2 x 2496 + 448 + 160 +
  // log-probs, incoming and outgoing fp32 gradients 3 x 512 = 33504.
  EXPECT_DOUBLE_EQ(e.head_backward_peak(2), 33504.0 + kWorkspaces);
  // In the embedding's backward: 16 P = 30720 + 4 V h = 512 + 160 = 31392.
  EXPECT_DOUBLE_EQ(e.embedding_backward_peak(), 31392.0 + kWorkspaces);

  const workload::MemoryEstimate est = workload::estimate_memory(s.model, s.training, s.parallel);
  EXPECT_DOUBLE_EQ(est.weights, 4.0 * 1920 + 3328);
  EXPECT_DOUBLE_EQ(est.weight_casts, 3328.0);
  EXPECT_DOUBLE_EQ(est.gradients, 0.0);  // set_to_none: none computed yet
  EXPECT_DOUBLE_EQ(est.optimizer_states, 8.0 * 1920);
  EXPECT_DOUBLE_EQ(est.workspaces, kWorkspaces);
  EXPECT_DOUBLE_EQ(est.total(), 33504.0 + kWorkspaces);
}

TEST(EagerMemory, FewTokensPeakInTheEmbeddingBackwardWithEveryGradient) {
  // L = 1, h = 64, f = 256, a = 1, s = 1, V = 16, b = 1 (T = 1): P = 49984 +
  // 1024 + 64 + 128 = 51200. The head's moment: 12 P = 614400 + casts 98304 +
  // 2048 + layer 20 x 64 + 4 x 256 + 16 + 4 = 2324 + head 392 + ids 24 + 12 T V
  // = 192: 717684. The embedding's: 16 P = 819200 + 4 V h = 4096 + 24 = 823320.
  const config::Scenario s = eager_scenario(R"({"num_layers": 1, "hidden_size": 64, "ffn_hidden_size": 256,
    "num_attention_heads": 1, "seq_length": 1, "max_position_embeddings": 1, "vocab_size": 16,
    "hidden_dropout": 0.0, "attention_dropout": 0.0})",
                                              1);
  const workload::EagerMemory e = workload::eager_memory(s.model, s.training);
  EXPECT_DOUBLE_EQ(e.head_backward_peak(1), 717684.0 + kWorkspaces);
  EXPECT_DOUBLE_EQ(e.embedding_backward_peak(), 823320.0 + kWorkspaces);
  const workload::MemoryEstimate est = workload::estimate_memory(s.model, s.training, s.parallel);
  EXPECT_DOUBLE_EQ(est.gradients, 4.0 * 51200);
  EXPECT_DOUBLE_EQ(est.weight_casts, 0.0);
  EXPECT_DOUBLE_EQ(est.total(), 823320.0 + kWorkspaces);
}

TEST(EagerMemory, TimelinePeaksInLogSoftmaxBackwardAtTheClosedForm) {
  // Large enough for every kernel to take time (the tiny model's kernels tie at
  // the same nanosecond).
  const config::Scenario s = eager_scenario(R"({"num_layers": 2, "hidden_size": 256, "ffn_hidden_size": 1024,
    "num_attention_heads": 4, "seq_length": 256, "max_position_embeddings": 256, "vocab_size": 2048,
    "hidden_dropout": 0.0, "attention_dropout": 0.0})",
                                              2);
  const workload::EagerMemory e = workload::eager_memory(s.model, s.training);
  const exec::SimulationOutput out = exec::simulate(s);
  const exec::MemoryTimeline& m = out.memory_over_time;
  EXPECT_DOUBLE_EQ(m.peak_bytes, out.memory.total());
  EXPECT_DOUBLE_EQ(m.peak_bytes, e.head_backward_peak(2));
  EXPECT_EQ(m.peak_task, "log_softmax.backward");
  // Parameters, AdamW's moments and the workspaces all along, the token ids from
  // the first kernel; after the step every gradient (4 P) is left, nothing else.
  const double states = 12.0 * e.parameters + kWorkspaces;
  EXPECT_EQ(m.series.points.front().first, 0);
  EXPECT_DOUBLE_EQ(m.series.points.front().second, states + e.token_ids);
  EXPECT_DOUBLE_EQ(m.series.points.back().second, states + 4.0 * e.parameters);
}

}  // namespace
}  // namespace trainsim
