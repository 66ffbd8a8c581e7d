// The PyTorch eager program sharded by FSDP2 (framework "pytorch_eager" with
// zero_stage 3; docs/model.md, "PyTorch eager under FSDP2"): its collectives, copies,
// optimizer and memory against hand counts for GPT-2 124M, the timeline against the
// closed form, and the reader's refusals.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "execution/simulate.h"
#include "scenario/errors.h"
#include "scenario/reader.h"
#include "test_scenarios.h"
#include "workload/memory.h"

namespace trainsim {
namespace {

constexpr std::string_view kFsdp2 =
    R"("dp": "auto", "zero_stage": 3, "overlap_grad_reduce": true, "overlap_param_gather": true)";

// scenarios/validation/gpt2-124m-1xh100.json's model and program, `gpus` H100s.
std::string gpt2_scenario(std::string_view parallelism, int gpus, const std::string& model = "", int iterations = 1) {
  const std::string gpt2 = R"({"num_layers": 12, "hidden_size": 768, "ffn_hidden_size": 3072,
              "num_attention_heads": 12, "seq_length": 1024, "max_position_embeddings": 1024,
              "vocab_size": 50304, "hidden_dropout": 0.0, "attention_dropout": 0.0})";
  return R"({"cluster": {"gpu": "H100-SXM5-80GB", "num_nodes": 1, "gpus_per_node": )" + std::to_string(gpus) +
         R"(}, "model": )" + (model.empty() ? gpt2 : model) + R"(,
    "training": {"global_batch_size": )" +
         std::to_string(8 * gpus) + R"(, "micro_batch_size": 8, "precision": "bf16", "optimizer": "adamw",
                 "framework": "pytorch_eager"},
    "parallelism": {)" + std::string(parallelism) + R"(}, "simulation": {"iterations": )" +
         std::to_string(iterations) + "}}";
}

// The same scenario run by the fused program (framework "fused").
void fused_program(std::string& scenario) {
  const std::string eager = R"("framework": "pytorch_eager")";
  scenario.replace(scenario.find(eager), eager.size(), R"("framework": "fused")");
}

constexpr double kLayerParams = 7'087'872.0;                         // 12 h^2 + 13 h at h = 768
constexpr double kRootParams = 50304.0 * 768 + 1024.0 * 768 + 1536;  // wte, wpe, ln_f: 39,421,440
constexpr double kParams = 12 * kLayerParams + kRootParams;          // 124,475,904

TEST(PytorchFsdp2, EachBlockGathersTwiceTheRootOnceAndEveryUnitReduceScattersOnce) {
  const config::Scenario s = scenario::parse_scenario_text(gpt2_scenario(kFsdp2, 8), "fsdp2.json");
  ASSERT_EQ(s.parallel.data, 8);
  const exec::SimulationOutput out = exec::simulate(s);
  std::map<std::string, double> gathers;   // per name, bytes
  std::map<std::string, double> reduces;   // per name, bytes
  std::map<std::string, double> copies;    // FSDP2's copies, per name, bytes
  double optimizer = 0.0;
  for (workload::TaskId id = 0; id < out.iteration.graph.size(); ++id) {
    const workload::Task& t = out.iteration.graph[id];
    if (t.iteration != 0 || t.rank != 0) continue;
    const workload::Work& w = out.iteration.graph.work(id);
    if (w.collective && w.collective->kind == net::CollectiveKind::kAllGather) gathers[w.name] = w.collective->bytes;
    if (w.collective && w.collective->kind == net::CollectiveKind::kReduceScatter) reduces[w.name] = w.collective->bytes;
    if (w.name.find(".fsdp_") != std::string::npos) copies[w.name] = w.compute.bytes;
    if (w.name == "optimizer_step") optimizer = w.compute.bytes;
  }
  // fp32 parameters (no MixedPrecisionPolicy): the root once before the embedding,
  // each block before its forward and again before its backward.
  ASSERT_EQ(gathers.size(), 25U);
  EXPECT_DOUBLE_EQ(gathers.at("param_all_gather.root.forward"), 4.0 * kRootParams);
  for (int l = 0; l < 12; ++l) {
    EXPECT_DOUBLE_EQ(gathers.at("param_all_gather.layer" + std::to_string(l) + ".forward"), 4.0 * kLayerParams);
    EXPECT_DOUBLE_EQ(gathers.at("param_all_gather.layer" + std::to_string(l) + ".backward"), 4.0 * kLayerParams);
    EXPECT_DOUBLE_EQ(reduces.at("grad_reduce_scatter.layer" + std::to_string(l)), 4.0 * kLayerParams);
  }
  ASSERT_EQ(reduces.size(), 13U);
  EXPECT_DOUBLE_EQ(reduces.at("grad_reduce_scatter.root"), 4.0 * kRootParams);
  // A copy-out after each gather and a chunk_cat before each reduce-scatter: every
  // fp32 element read and written once.
  ASSERT_EQ(copies.size(), 25U + 13U);
  EXPECT_DOUBLE_EQ(copies.at("root.fsdp_copy_out.forward"), 8.0 * kRootParams);
  EXPECT_DOUBLE_EQ(copies.at("layer5.fsdp_copy_out.backward"), 8.0 * kLayerParams);
  EXPECT_DOUBLE_EQ(copies.at("root.fsdp_chunk_cat"), 8.0 * kRootParams);
  // Fused AdamW over the rank's shard: 7 fp32 accesses a parameter.
  EXPECT_DOUBLE_EQ(optimizer, 28.0 * kParams / 8.0);

  // The program's forward returns the loss, so the root's pre-backward hook fires as
  // the backward starts: the last block's gather is prefetched with its first kernel.
  double backward_start = -1.0;
  double last_block_gather = -1.0;
  for (const exec::Span& span : out.timeline.spans) {
    const workload::Task& t = out.iteration.graph[span.task];
    if (span.rank != 0 || t.iteration != 0) continue;
    const std::string& name = out.iteration.graph.work(t).name;
    if (name == "loss_seed") backward_start = core::to_seconds(span.start);
    if (name == "param_all_gather.layer11.backward") last_block_gather = core::to_seconds(span.start);
  }
  ASSERT_GT(backward_start, 0.0);
  EXPECT_DOUBLE_EQ(last_block_gather, backward_start);
}

TEST(PytorchFsdp2, MemoryShardsTheStatesAndKeepsTheRootWhole) {
  const config::Scenario s = scenario::parse_scenario_text(gpt2_scenario(kFsdp2, 8), "fsdp2.json");
  const config::Scenario one = scenario::parse_scenario_text(gpt2_scenario(R"("dp": 1)", 1), "one.json");
  const workload::EagerMemory e = workload::eager_memory(s.model, s.training);
  EXPECT_DOUBLE_EQ(e.parameters, kParams);
  EXPECT_DOUBLE_EQ(e.block_parameters, kLayerParams);
  EXPECT_DOUBLE_EQ(e.root_parameters, kRootParams);
  const auto fsdp = workload::memory_per_stage(s.model, s.training, s.parallel).front();
  const auto single = workload::memory_per_stage(one.model, one.training, one.parallel).front();
  // In log_softmax's backward, as on one GPU but for the model states (12 P / 8 of
  // sharded weights and moments and the root's 4 P_root unsharded instead of 12 P)
  // and the last block, prefetched as the backward started (4 P_b).
  EXPECT_EQ(e.fsdp2_peak(12, 8.0).at, "log_softmax.backward");
  EXPECT_DOUBLE_EQ(fsdp.gathered_weights, 4.0 * kRootParams);
  EXPECT_DOUBLE_EQ(fsdp.weights, 4.0 * kParams / 8.0 + 4.0 * kRootParams + single.weight_casts);
  EXPECT_DOUBLE_EQ(fsdp.optimizer_states, 8.0 * kParams / 8.0);
  EXPECT_DOUBLE_EQ(fsdp.gradients, 0.0);
  EXPECT_NEAR(fsdp.activations, single.activations + 4.0 * kLayerParams, 1.0);
  EXPECT_NEAR(fsdp.total(), single.total() - 10.5 * kParams + 4.0 * kRootParams + 4.0 * kLayerParams, 1.0);
}

// Large enough for every kernel to take time (the tiny model's kernels tie at the
// same nanosecond); `tokens` per GPU decides which moment peaks.
config::Scenario small_fsdp2(int seq, int iterations = 1) {
  const std::string small = R"({"num_layers": 3, "hidden_size": 256, "ffn_hidden_size": 1024,
    "num_attention_heads": 4, "seq_length": )" + std::to_string(seq) +
                            R"(, "max_position_embeddings": 256, "vocab_size": 2048,
    "hidden_dropout": 0.0, "attention_dropout": 0.0})";
  return scenario::parse_scenario_text(gpt2_scenario(kFsdp2, 2, small, iterations), "fsdp2.json");
}

TEST(PytorchFsdp2, TimelinePeaksInLogSoftmaxBackwardAtTheClosedForm) {
  // Three steps: each ends where the first began, plus the gradients' shards.
  const config::Scenario s = small_fsdp2(256, 3);
  const workload::EagerMemory e = workload::eager_memory(s.model, s.training);
  const exec::SimulationOutput out = exec::simulate(s);
  const exec::MemoryTimeline& m = out.memory_over_time;
  EXPECT_EQ(e.fsdp2_peak(3, 2.0).at, "log_softmax.backward");
  EXPECT_DOUBLE_EQ(m.peak_bytes, out.memory.total());
  EXPECT_EQ(m.peak_task, "log_softmax.backward");
  // The sharded states, the root's unsharded weights and the workspaces before the
  // first kernel (the root's gather runs first); after the step every gradient's
  // shard, 4 P / 2, and nothing else.
  const double states = e.fsdp2_states(2.0) + e.workspaces;
  EXPECT_EQ(m.series.points.front().first, 0);
  EXPECT_DOUBLE_EQ(m.series.points.front().second, states);
  EXPECT_DOUBLE_EQ(m.series.points.back().second, states + 2.0 * e.parameters);
}

TEST(PytorchFsdp2, WithFewTokensTheBlocksBackwardPeaksAtTheClosedForm) {
  // At 16 tokens a GPU the T x V tensors are small beside the gathered blocks and the
  // gradients being reduce-scattered: the peak moves into the blocks' backward, where
  // the timeline reaches the walk's figure.
  const config::Scenario s = small_fsdp2(2);
  const workload::EagerMemory e = workload::eager_memory(s.model, s.training);
  const workload::EagerMemory::Moment walk = e.fsdp2_peak(3, 2.0);
  EXPECT_NE(walk.at, "log_softmax.backward");
  const exec::SimulationOutput out = exec::simulate(s);
  EXPECT_DOUBLE_EQ(out.memory.total(), walk.total);
  EXPECT_DOUBLE_EQ(out.memory_over_time.peak_bytes, walk.total) << out.memory_over_time.peak_task;
}

TEST(PytorchFsdp2, TheReaderAsksForFsdp2sOverlapsAndRefusesOtherZeroStages) {
  const auto error = [](const std::string& text) {
    try {
      (void)scenario::parse_scenario_text(text, "fsdp2.json");
    } catch (const scenario::ScenarioError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  const std::string gather =
      error(gpt2_scenario(R"("dp": "auto", "zero_stage": 3, "overlap_grad_reduce": true)", 8));
  EXPECT_NE(gather.find("/parallelism/overlap_param_gather"), std::string::npos) << gather;
  EXPECT_NE(gather.find("FSDP2"), std::string::npos) << gather;
  const std::string reduce =
      error(gpt2_scenario(R"("dp": "auto", "zero_stage": 3, "overlap_param_gather": true)", 8));
  EXPECT_NE(reduce.find("/parallelism/overlap_grad_reduce"), std::string::npos) << reduce;
  EXPECT_NE(reduce.find("reduce-scatters each block's gradients"), std::string::npos) << reduce;
  const std::string stage2 = error(gpt2_scenario(
      R"("dp": "auto", "zero_stage": 2, "overlap_grad_reduce": true, "overlap_param_gather": true)", 8));
  EXPECT_NE(stage2.find("/parallelism/zero_stage"), std::string::npos) << stage2;
  EXPECT_NE(stage2.find("ZeRO stage 2"), std::string::npos) << stage2;
  EXPECT_NE(stage2.find("use zero_stage 0 or 3"), std::string::npos) << stage2;
  const std::string eager_off = error(gpt2_scenario(std::string(kFsdp2) + R"(, "use_torch_fsdp2": false)", 8));
  EXPECT_NE(eager_off.find("/parallelism/use_torch_fsdp2"), std::string::npos) << eager_off;
  std::string stage1 = gpt2_scenario(R"("dp": "auto", "zero_stage": 1, "use_torch_fsdp2": true)", 8);
  fused_program(stage1);
  const std::string fsdp2_stage1 = error(stage1);
  EXPECT_NE(fsdp2_stage1.find("/parallelism/use_torch_fsdp2"), std::string::npos) << fsdp2_stage1;
  EXPECT_NE(fsdp2_stage1.find("needs zero_stage 3 (found 1)"), std::string::npos) << fsdp2_stage1;
}

// The fused program (torchtitan's, NeMo AutoModel's) under use_torch_fsdp2 with
// FSDP2's MixedPrecisionPolicy as torchtitan sets it (bf16 parameters, fp32
// reduction): a block's copy-out reads and writes its bf16 parameters (4 bytes a
// parameter), its chunk_cat reads the bf16 gradients and writes fp32 (6).
TEST(PytorchFsdp2, TorchFsdp2AroundTheFusedProgramCopiesInTheParametersAndReductionsTypes) {
  std::string text = gpt2_scenario(std::string(kFsdp2) + R"(, "use_torch_fsdp2": true)", 8);
  fused_program(text);
  const config::Scenario s = scenario::parse_scenario_text(text, "fsdp2.json");
  ASSERT_TRUE(s.parallel.torch_fsdp2);
  const exec::SimulationOutput out = exec::simulate(s);
  std::map<std::string, double> copies;
  std::size_t gathers = 0;
  std::size_t reduces = 0;
  double gathered = 0.0;
  for (workload::TaskId id = 0; id < out.iteration.graph.size(); ++id) {
    const workload::Task& t = out.iteration.graph[id];
    if (t.iteration != 0 || t.rank != 0) continue;
    const workload::Work& w = out.iteration.graph.work(id);
    if (w.collective && w.collective->kind == net::CollectiveKind::kAllGather) {
      ++gathers;
      if (w.name == "param_all_gather.layer5.forward") gathered = w.collective->bytes;
    }
    if (w.collective && w.collective->kind == net::CollectiveKind::kReduceScatter) ++reduces;
    if (w.name.find(".fsdp_") != std::string::npos) copies[w.name] = w.compute.bytes;
  }
  EXPECT_DOUBLE_EQ(gathered, 2.0 * kLayerParams);  // bf16 parameters gathered
  EXPECT_EQ(copies.size(), gathers + reduces);     // a copy after each gather, one before each reduction
  EXPECT_DOUBLE_EQ(copies.at("layer5.fsdp_copy_out.forward"), 4.0 * kLayerParams);
  EXPECT_DOUBLE_EQ(copies.at("layer5.fsdp_copy_out.backward"), 4.0 * kLayerParams);
  EXPECT_DOUBLE_EQ(copies.at("layer5.fsdp_chunk_cat"), 6.0 * kLayerParams);
  // With expert parallelism over every data-parallel rank (EP 8 on 8 GPUs, as NeMo
  // AutoModel's MoE rows) each rank holds its experts alone: they are neither gathered
  // nor copied, so a layer's copy-out moves twice what its all-gather does (2w against w
  // bytes a gathered parameter), not the experts too.
  const std::string moe = R"({"cluster": {"gpu": "H100-SXM5-80GB", "num_nodes": 1}, "model": )" + testing::kMoe +
                          R"(, "training": {"global_batch_size": 16, "micro_batch_size": 2}, "parallelism": {"ep": 8, )" +
                          std::string(kFsdp2) + R"(, "use_torch_fsdp2": true}})";
  const exec::SimulationOutput experts = exec::simulate(scenario::parse_scenario_text(moe, "moe.json"));
  double gathered_moe = 0.0;
  double copied_moe = 0.0;
  for (workload::TaskId id = 0; id < experts.iteration.graph.size(); ++id) {
    const workload::Task& t = experts.iteration.graph[id];
    if (t.iteration != 0 || t.rank != 0 || t.microbatch != 0) continue;
    const workload::Work& w = experts.iteration.graph.work(id);
    if (w.name.rfind("param_all_gather.layer0.forward", 0) == 0) gathered_moe += w.collective->bytes;
    if (w.name == "layer0.fsdp_copy_out.forward") copied_moe = w.compute.bytes;
  }
  ASSERT_GT(gathered_moe, 0.0);
  EXPECT_DOUBLE_EQ(copied_moe, 2.0 * gathered_moe);
  // Without use_torch_fsdp2 the same ZeRO-3 runs no copies (DeepSpeed, FSDP1's flat parameters).
  std::string plain = gpt2_scenario(kFsdp2, 8);
  fused_program(plain);
  const exec::SimulationOutput without = exec::simulate(scenario::parse_scenario_text(plain, "zero3.json"));
  for (workload::TaskId id = 0; id < without.iteration.graph.size(); ++id)
    EXPECT_EQ(without.iteration.graph.work(id).name.find(".fsdp_"), std::string::npos);
  EXPECT_GT(out.timeline.makespan, without.timeline.makespan);
}

}  // namespace
}  // namespace trainsim
