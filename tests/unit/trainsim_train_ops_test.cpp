// "framework": "trainsim_train": the fused op list as trainsim-train runs it
// (docs/model.md, "trainsim-train"): its four layout copies around the flash kernels
// and its single-pass loss, as closed forms; the scenario key, its errors, and how a
// trainer's run file selects it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "execution/kernel_classes.h"
#include "hardware/kernel_id.h"
#include "scenario/errors.h"
#include "scenario/measured_run.h"
#include "scenario/reader.h"
#include "workload/memory.h"
#include "workload/transformer_ops.h"

namespace trainsim {
namespace {

using ::testing::HasSubstr;

// GPT-2 124M's shape at micro-batch 8: t = 8 x 1024 tokens, h 768, V 50304 (padded).
workload::ModelConfig gpt2_124m() {
  workload::ModelConfig m;
  m.name = "gpt2-124m";
  m.num_layers = 12;
  m.hidden_size = 768;
  m.ffn_hidden_size = 3072;
  m.num_attention_heads = 12;
  m.num_query_groups = 12;
  m.kv_channels = 64;
  m.seq_length = 1024;
  m.max_position_embeddings = 1024;
  m.vocab_size = 50304;
  m.hidden_dropout = 0.0;
  m.attention_dropout = 0.0;
  return m;
}

workload::TrainingConfig training(workload::Framework f) {
  workload::TrainingConfig t;
  t.global_batch_size = 8;
  t.micro_batch_size = 8;
  t.framework = f;
  return t;
}

const workload::Op& op_named(const std::vector<workload::Op>& ops, const std::string& name) {
  for (const workload::Op& op : ops)
    if (op.name == name) return op;
  throw std::runtime_error("no op " + name);
}

bool has_op(const std::vector<workload::Op>& ops, const std::string& name) {
  for (const workload::Op& op : ops)
    if (op.name == name) return true;
  return false;
}

constexpr double kT = 8.0 * 1024.0, kH = 768.0, kV = 50304.0;

TEST(TrainsimTrainOps, LayoutCopiesAroundTheFlashKernels) {
  const workload::TransformerOps ops(gpt2_124m(), training(workload::Framework::kTrainsimTrain), 8);
  const auto fwd = ops.layer_forward(3), bwd = ops.layer_backward(3);
  // permute_qkv reads and writes q, k, v (3 t h bf16 each way): 6 t h e = 75,497,472 B;
  // heads_to_rows the attention output: 2 t h e = 25,165,824 B. Backward, the same bytes.
  EXPECT_DOUBLE_EQ(op_named(fwd, "layer3.attention.permute_qkv").work.bytes, 6.0 * kT * kH * 2.0);
  EXPECT_DOUBLE_EQ(op_named(fwd, "layer3.attention.permute_qkv").work.bytes, 75497472.0);
  EXPECT_DOUBLE_EQ(op_named(fwd, "layer3.attention.heads_to_rows").work.bytes, 25165824.0);
  EXPECT_DOUBLE_EQ(op_named(bwd, "layer3.attention.permute_qkv.backward").work.bytes, 75497472.0);
  EXPECT_DOUBLE_EQ(op_named(bwd, "layer3.attention.heads_to_rows.backward").work.bytes, 25165824.0);
  // No measured kernel of ours copies: the roofline prices them; the profiler files
  // them with attention, as the trainer's timeline does.
  EXPECT_EQ(op_named(fwd, "layer3.attention.permute_qkv").work.kernel, hw::KernelId::kNone);
  EXPECT_EQ(exec::kernel_class_of(op_named(fwd, "layer3.attention.heads_to_rows")),
            exec::kernel_class_of(op_named(fwd, "layer3.attention")));
  // The fused list has neither.
  const workload::TransformerOps fused(gpt2_124m(), training(workload::Framework::kFused), 8);
  EXPECT_FALSE(has_op(fused.layer_forward(3), "layer3.attention.permute_qkv"));
  EXPECT_EQ(fused.layer_forward(3).size() + 2, fwd.size());
}

TEST(TrainsimTrainOps, TheLossAndItsGradientAreOneForwardKernel) {
  const workload::TransformerOps ops(gpt2_124m(), training(workload::Framework::kTrainsimTrain), 8);
  // softmax_cross_entropy_bytes(8192, 50304, 50304): bf16 logits in, bf16 gradients out,
  // an int32 target and an fp32 loss per row: 8192 x (4 x 50304 + 8) = 1,648,427,008 B.
  const std::vector<workload::Op> head = ops.head_forward();
  const workload::Op& loss = op_named(head, "loss");
  EXPECT_DOUBLE_EQ(loss.work.bytes, kT * (4.0 * kV + 8.0));
  EXPECT_DOUBLE_EQ(loss.work.bytes, 1648427008.0);
  EXPECT_EQ(loss.work.kernel, hw::KernelId::kSoftmaxCrossEntropy);
  EXPECT_FALSE(has_op(ops.head_backward(), "loss.backward"));
  EXPECT_TRUE(has_op(ops.head_backward(), "output_layer.backward"));
  // The fused list: fp32 softmax forward (e + 4 per logit) and again backward.
  const workload::TransformerOps fused(gpt2_124m(), training(workload::Framework::kFused), 8);
  EXPECT_DOUBLE_EQ(op_named(fused.head_forward(), "loss").work.bytes, kT * kV * 6.0);
  EXPECT_DOUBLE_EQ(op_named(fused.head_backward(), "loss.backward").work.bytes, kT * kV * 6.0);
}

// GPT-2 124M (P = 124,475,904 with V 50304, tied), b 8 x s 1024, no accumulation:
//   states 18 P                                                    2,240,566,272
//   12 layers x ((9 t h + 2 t f) x 2 + (4 t + t a) x 4)             2,573,205,504
//   outside: (13 t h + t V + t f + t) x 2 + 2 t x 4 + 3 t x 4       1,038,270,464
//   workspaces: 64 MiB + 256-rounded (t a + t h) x 4                    92,667,904
//   total                                                           5,944,710,144
// The trainer counted 5,946,483,199 bytes of its own buffers on the H100
// (tests/validation/h100/train-gpt2-124m.json, peak_memory_source): 1.8 MB more, the
// layer-norm and embedding scratch and allocation rounding the estimate leaves out.
TEST(TrainsimTrainOps, TheOptimizerStepIsTheTrainersOwn) {
  // AdamW with the bf16 copy 4 + 8 + 16 + 2 = 30 bytes per parameter, the
  // gradients zeroed (4), no norm (no clipping), no 1/dp pass: 34 per parameter
  // against Megatron-Core's 38 + 4 (docs/model.md, "Optimizer step").
  const workload::TransformerOps own(gpt2_124m(), training(workload::Framework::kTrainsimTrain), 8);
  const workload::TransformerOps fused(gpt2_124m(), training(workload::Framework::kFused), 8);
  const workload::OptimizerScope scope{1000.0, 1000.0, true, false};
  EXPECT_DOUBLE_EQ(own.optimizer_step(scope).work.bytes, 34'000.0);
  EXPECT_DOUBLE_EQ(fused.optimizer_step(scope).work.bytes, 38'000.0 + 12'000.0);
}

TEST(TrainsimTrainOps, MemoryIsTheTrainersBuffersAllocatedUpFront) {
  workload::ParallelConfig p;
  const auto stages = workload::memory_per_stage(gpt2_124m(), training(workload::Framework::kTrainsimTrain), p);
  ASSERT_EQ(stages.size(), 1U);
  EXPECT_DOUBLE_EQ(stages[0].parameters, 124475904.0);
  EXPECT_DOUBLE_EQ(stages[0].total(), 5944710144.0);
  EXPECT_NEAR(stages[0].total() / 5946483199.0 - 1.0, 0.0, 0.001);
}

TEST(TrainsimTrainOps, RejectsWhatTheTrainerDoesNotRun) {
  workload::ModelConfig swiglu = gpt2_124m();
  swiglu.swiglu = true;
  EXPECT_THROW(workload::TransformerOps(swiglu, training(workload::Framework::kTrainsimTrain), 8),
               std::invalid_argument);
  EXPECT_THROW(workload::TransformerOps(gpt2_124m(), training(workload::Framework::kTrainsimTrain), 8, 2),
               std::invalid_argument);
}

std::string scenario_text(const std::string& training_extra, const std::string& parallelism = "") {
  return R"({"cluster": {"gpu": "H100-SXM5-80GB", "num_nodes": 1, "gpus_per_node": 8},
             "model": {"num_layers": 2, "hidden_size": 64, "ffn_hidden_size": 256, "num_attention_heads": 4,
                       "seq_length": 32, "vocab_size": 100, "hidden_dropout": 0, "attention_dropout": 0},
             "training": {"global_batch_size": 64, "micro_batch_size": 8, "framework": "trainsim_train")" +
         training_extra + R"(}, "parallelism": {)" + parallelism + "}}";
}

void expect_error(const std::string& text, const std::string& path, const std::string& part) {
  try {
    (void)scenario::parse_scenario_text(text, "t.json");
    ADD_FAILURE() << "no error for " << text;
  } catch (const scenario::ScenarioError& e) {
    EXPECT_EQ(e.json_path(), path);
    EXPECT_THAT(e.what(), HasSubstr(part));
  }
}

TEST(TrainsimTrainScenario, DataParallelReplicasAndNothingElse) {
  const auto s = scenario::parse_scenario_text(scenario_text(""), "t.json");
  EXPECT_EQ(s.training.framework, workload::Framework::kTrainsimTrain);
  EXPECT_EQ(s.parallel.data, 8);
  expect_error(scenario_text("", R"("tp": 2)"), "/parallelism/tp", "tensor parallelism");
  expect_error(scenario_text("", R"("zero_stage": 1)"), "/parallelism/zero_stage", "ZeRO");
  expect_error(scenario_text(R"(, "cross_entropy": "unfused")"), "/training/cross_entropy",
               "fused softmax + cross-entropy");
  expect_error(scenario_text(R"(, "precision": "fp16")"), "/training/precision", "bf16");
}

TEST(TrainsimTrainScenario, ATrainerRunFileSelectsIt) {
  std::ifstream in(std::string(TRAINSIM_SOURCE_DIR) + "/tests/data/measured_run_fixture.json");
  nlohmann::json run = nlohmann::json::parse(in);
  run["tool"] = "trainsim-train 0.1";
  run["training"].erase("framework");
  // Written before the key existed: the tool says whose kernels ran.
  EXPECT_EQ(scenario::parse_measured_run(run.dump(), "RUN.json").framework, "trainsim_train");
  run["training"]["framework"] = "fused";
  EXPECT_EQ(scenario::parse_measured_run(run.dump(), "RUN.json").framework, "fused");
  run["tool"] = "another trainer";
  run["training"].erase("framework");
  EXPECT_EQ(scenario::parse_measured_run(run.dump(), "RUN.json").framework, "fused");
}

}  // namespace
}  // namespace trainsim
