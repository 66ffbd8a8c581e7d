// ZeRO stages 1-3 and Megatron-LM's distributed optimizer against hand-derived
// closed forms (Rajbhandari et al., SC'20, "ZeRO: Memory Optimizations Toward
// Training Trillion Parameter Models", Figure 1 and sections 5 and 7):
// model-state bytes per GPU, bytes each stage puts on the data-parallel stream,
// the optimizer step shrinking with the shard, and the iteration with free links.
#include <gtest/gtest.h>

#include <map>
#include <utility>
#include <string>

#include "execution/simulate.h"
#include "report/metrics.h"
#include "scenario/errors.h"
#include "scenario/reader.h"
#include "workload/memory.h"
#include "workload/parameters.h"
#include "workload/transformer_ops.h"

namespace trainsim {
namespace {

// A model whose parameter count is easy to derive by hand: RMSNorm, rotary
// positions, no biases, tied embeddings, h = 1024, f = 4h, V = 32000, 4 layers.
// Per layer: QKV 3h^2 + output h^2 + MLP 2 h f = 12 h^2 = 12,582,912, plus two
// RMSNorm scales 2h = 2,048: 12,584,960. Four layers 50,339,840; word embedding
// V h = 32,768,000; final norm h = 1,024. Psi = 83,108,864.
const std::string kModel = R"({"num_layers": 4, "hidden_size": 1024, "ffn_hidden_size": 4096,
    "num_attention_heads": 8, "seq_length": 512, "vocab_size": 32000, "normalization": "RMSNorm",
    "position_embedding_type": "rope", "add_bias_linear": false})";
constexpr double kPsi = 83'108'864.0;
constexpr double kEmbedding = 32'768'000.0;  // the largest unit ZeRO-3 gathers

// 8 H100 of one node, dp = 8, 64 sequences in micro-batches of 8: one micro-batch
// per replica. bf16 gradients, so that the paper's 2 + 2 + 12 bytes hold.
std::string scenario_text(const std::string& parallelism, bool free_links = false) {
  const std::string links =
      free_links ? R"(, "intra_node": {"bandwidth": "1000TB/s", "latency": "0us", "nvls_latency": "0us"})" : "";
  return R"({"cluster": {"gpu": "H100-SXM5-80GB", "num_nodes": 1)" + links + R"(}, "model": )" + kModel +
         R"(, "training": {"global_batch_size": 64, "micro_batch_size": 8, "grad_reduce_dtype": "bf16"},
         "parallelism": {"dp": 8)" + (parallelism.empty() ? "" : ", " + parallelism) + "}}";
}

config::Scenario zero(int stage, const std::string& extra = "", bool free_links = false) {
  return scenario::parse_scenario_text(
      scenario_text(R"("zero_stage": )" + std::to_string(stage) + (extra.empty() ? "" : ", " + extra), free_links),
      "zero.json");
}

// Bytes S of the collectives of iteration 0 on the dp_comm stream, by kind, from
// the executed timeline.
std::map<net::CollectiveKind, double> dp_bytes(const exec::SimulationOutput& out) {
  std::map<net::CollectiveKind, double> bytes;
  for (const exec::Span& span : out.timeline.spans) {
    const workload::Task& t = out.iteration.graph[span.task];
    const workload::Work& w = out.iteration.graph.work(t);
    if (t.stream != workload::Stream::kDpComm || t.iteration != 0 || t.rank != 0) continue;
    bytes[w.collective->kind] += w.collective->bytes;
  }
  return bytes;
}

double optimizer_seconds(const exec::SimulationOutput& out) {
  for (const exec::Span& span : out.timeline.spans)
    if (out.iteration.graph[span.task].category == workload::Category::kOptimizer)
      return core::to_seconds(span.end - span.start);
  ADD_FAILURE() << "no optimizer step";
  return 0.0;
}

TEST(ZeroMemory, PaperFigure1SevenAndAHalfBillionParametersOn64Gpus) {
  // Psi = 7.5B, Nd = 64, K = 12, mixed-precision Adam: 120 GB, 31.4 GB, 16.6 GB, 1.88 GB.
  workload::TrainingConfig t;
  t.precision = hw::Precision::kBf16;
  t.grad_reduce_dtype = hw::Precision::kBf16;
  const auto total = [&](int stage) {
    const workload::StateBytes s = workload::sharded_state_bytes(t, 7.5e9, stage, 64);
    return s.weights + s.gradients + s.optimizer;
  };
  EXPECT_DOUBLE_EQ(total(0), 16.0 * 7.5e9);                           // 120 GB
  EXPECT_DOUBLE_EQ(total(1), 4.0 * 7.5e9 + 12.0 * 7.5e9 / 64.0);      // 31.40625 GB
  EXPECT_DOUBLE_EQ(total(2), 2.0 * 7.5e9 + 14.0 * 7.5e9 / 64.0);      // 16.640625 GB
  EXPECT_DOUBLE_EQ(total(3), 16.0 * 7.5e9 / 64.0);                    // 1.875 GB
  EXPECT_DOUBLE_EQ(total(1), 31.40625e9);
  EXPECT_DOUBLE_EQ(total(2), 16.640625e9);
  EXPECT_DOUBLE_EQ(total(3), 1.875e9);
}

TEST(ZeroMemory, EachStageShardsItsStatesOverTheDataParallelGroup) {
  const auto s0 = zero(0);
  EXPECT_DOUBLE_EQ(workload::count_parameters(s0.model).total, kPsi);
  const auto states = [](const config::Scenario& s) {
    return workload::memory_per_stage(s.model, s.training, s.parallel).front();
  };
  const workload::MemoryEstimate m0 = states(s0);
  EXPECT_DOUBLE_EQ(m0.parameters, kPsi);
  EXPECT_DOUBLE_EQ(m0.weights, 2.0 * kPsi);
  EXPECT_DOUBLE_EQ(m0.gradients, 2.0 * kPsi);
  EXPECT_DOUBLE_EQ(m0.optimizer_states, 12.0 * kPsi);

  const workload::MemoryEstimate m1 = states(zero(1));
  EXPECT_DOUBLE_EQ(m1.weights, 2.0 * kPsi);
  EXPECT_DOUBLE_EQ(m1.gradients, 2.0 * kPsi);
  EXPECT_DOUBLE_EQ(m1.optimizer_states, 12.0 * kPsi / 8.0);

  const workload::MemoryEstimate m2 = states(zero(2));
  EXPECT_DOUBLE_EQ(m2.weights, 2.0 * kPsi);
  EXPECT_DOUBLE_EQ(m2.gradients, 2.0 * kPsi / 8.0);
  EXPECT_DOUBLE_EQ(m2.optimizer_states, 12.0 * kPsi / 8.0);

  // Stage 3 also holds the full bf16 parameters of the unit being computed (the
  // embedding is the largest here), and of the next one when it is prefetched.
  const workload::MemoryEstimate m3 = states(zero(3));
  EXPECT_DOUBLE_EQ(m3.gathered_weights, 2.0 * kEmbedding);
  EXPECT_DOUBLE_EQ(m3.weights, 2.0 * kPsi / 8.0 + 2.0 * kEmbedding);
  EXPECT_DOUBLE_EQ(m3.gradients, 2.0 * kPsi / 8.0);
  EXPECT_DOUBLE_EQ(m3.optimizer_states, 12.0 * kPsi / 8.0);
  const workload::MemoryEstimate m3p = states(zero(3, R"("overlap_param_gather": true)"));
  EXPECT_DOUBLE_EQ(m3p.gathered_weights, 2.0 * 2.0 * kEmbedding);

  // Activations do not change; the result's memory reports the sharded states.
  EXPECT_DOUBLE_EQ(m3.activations, m0.activations);
  const auto s3 = zero(3);
  const report::Metrics r = report::compute_metrics(s3, exec::simulate(s3));
  EXPECT_DOUBLE_EQ(r.memory.peak_bytes_per_gpu, m3.total());
  EXPECT_TRUE(r.memory.fits);
}

TEST(ZeroMemory, OneDataParallelRankShardsNothing) {
  const auto one = [](int stage) {
    return scenario::parse_scenario_text(
        R"({"cluster": {"gpu": {"preset": "H100-SXM5-80GB", "platform": {"gpus_per_node": 1}}, "num_nodes": 1},
            "model": )" + kModel + R"(, "training": {"global_batch_size": 16, "micro_batch_size": 8},
            "parallelism": {"dp": 1, "zero_stage": )" + std::to_string(stage) + "}}",
        "zero.json");
  };
  const auto a = one(0);
  const auto b = one(3);
  EXPECT_DOUBLE_EQ(workload::estimate_memory(b.model, b.training, b.parallel).total(),
                   workload::estimate_memory(a.model, a.training, a.parallel).total());
  EXPECT_EQ(exec::simulate(b).timeline.makespan, exec::simulate(a).timeline.makespan);
}

TEST(ZeroTraffic, StageZeroAllReducesTheGradients) {
  const auto bytes = dp_bytes(exec::simulate(zero(0)));
  ASSERT_EQ(bytes.size(), 1u);
  EXPECT_DOUBLE_EQ(bytes.at(net::CollectiveKind::kAllReduce), 2.0 * kPsi);
}

TEST(ZeroTraffic, StagesOneAndTwoReduceScatterGradientsAndGatherParameters) {
  for (int stage : {1, 2})
    for (const std::string overlap : {"false", "true"}) {
      SCOPED_TRACE("stage " + std::to_string(stage) + ", overlap_param_gather " + overlap);
      const auto out = exec::simulate(zero(stage, R"("overlap_param_gather": )" + overlap));
      const auto bytes = dp_bytes(out);
      ASSERT_EQ(bytes.size(), 2u);
      EXPECT_DOUBLE_EQ(bytes.at(net::CollectiveKind::kReduceScatter), 2.0 * kPsi);  // bf16 gradients
      EXPECT_DOUBLE_EQ(bytes.at(net::CollectiveKind::kAllGather), 2.0 * kPsi);      // bf16 parameters
    }
}

TEST(ZeroTraffic, StageThreeMovesOneAndAHalfTimesTheAllReduceVolume) {
  // Per rank a ring all-reduce of S sends 2 (n-1)/n S, a reduce-scatter or an
  // all-gather (n-1)/n S (docs/model.md, "Ring"). ZeRO-3 (one micro-batch):
  // parameters gathered before the forward (Psi) and again before the backward
  // (Psi), gradients reduce-scattered (Psi): 3 Psi elements against 2 Psi.
  for (const std::string overlap : {"false", "true"}) {
    SCOPED_TRACE("overlap_param_gather " + overlap);
    const auto out = exec::simulate(zero(3, R"("overlap_param_gather": )" + overlap));
    const auto bytes = dp_bytes(out);
    ASSERT_EQ(bytes.size(), 2u);
    EXPECT_DOUBLE_EQ(bytes.at(net::CollectiveKind::kAllGather), 2.0 * 2.0 * kPsi);
    EXPECT_DOUBLE_EQ(bytes.at(net::CollectiveKind::kReduceScatter), 2.0 * kPsi);
    const double n = 8.0;
    const double stage3 = (n - 1.0) / n * (bytes.at(net::CollectiveKind::kAllGather) +
                                           bytes.at(net::CollectiveKind::kReduceScatter));
    const double stage0 = 2.0 * (n - 1.0) / n * dp_bytes(exec::simulate(zero(0))).at(net::CollectiveKind::kAllReduce);
    EXPECT_DOUBLE_EQ(stage3 / stage0, 1.5);
  }
}

TEST(ZeroTraffic, StageThreeWithExpertParallelismShardsExpertsOverTheExpertGroup) {
  // kModel with 4 experts of a GELU MLP each (top-2), EP 2 on dp 8: every rank
  // holds 2 experts, shared by the dp / ep = 4 ranks of its expert group.
  // Per layer: dense = attention 4h^2 + norms 2h + router h E = 4,194,304 + 2,048 +
  // 4,096 = 4,200,448; experts on a rank = 2 x 2 h f = 16,777,216.
  // Dense Psi = 4 x 4,200,448 + embedding 32,768,000 + final norm 1,024 = 49,570,816;
  // experts 4 x 16,777,216 = 67,108,864. One micro-batch: gathered forward and
  // backward (2 x 2 bytes), reduce-scattered once (2 bytes), each over its group.
  const std::string moe = R"({"num_layers": 4, "hidden_size": 1024, "ffn_hidden_size": 4096,
      "num_attention_heads": 8, "seq_length": 512, "vocab_size": 32000, "normalization": "RMSNorm",
      "position_embedding_type": "rope", "add_bias_linear": false, "num_experts": 4, "moe_router_topk": 2})";
  const std::string text = R"({"cluster": {"gpu": "H100-SXM5-80GB", "num_nodes": 1}, "model": )" + moe +
                           R"(, "training": {"global_batch_size": 64, "micro_batch_size": 8, "grad_reduce_dtype": "bf16"},
                           "parallelism": {"dp": 8, "ep": 2, "zero_stage": 3}})";
  const auto out = exec::simulate(scenario::parse_scenario_text(text, "zero3-ep.json"));
  std::map<std::pair<net::CollectiveKind, int>, double> bytes;  // (kind, group size) -> S
  for (const exec::Span& span : out.timeline.spans) {
    const workload::Task& t = out.iteration.graph[span.task];
    const workload::Work& w = out.iteration.graph.work(t);
    if (t.stream != workload::Stream::kDpComm || t.iteration != 0 || t.rank != 0) continue;
    bytes[{w.collective->kind, w.collective->group.size}] += w.collective->bytes;
  }
  constexpr double kDense = 49'570'816.0;
  constexpr double kExperts = 67'108'864.0;
  ASSERT_EQ(bytes.size(), 4u);
  EXPECT_DOUBLE_EQ((bytes[{net::CollectiveKind::kAllGather, 8}]), 2.0 * 2.0 * kDense);
  EXPECT_DOUBLE_EQ((bytes[{net::CollectiveKind::kReduceScatter, 8}]), 2.0 * kDense);
  EXPECT_DOUBLE_EQ((bytes[{net::CollectiveKind::kAllGather, 4}]), 2.0 * 2.0 * kExperts);
  EXPECT_DOUBLE_EQ((bytes[{net::CollectiveKind::kReduceScatter, 4}]), 2.0 * kExperts);
}

TEST(ZeroOptimizer, StepShrinksWithTheShardButNotItsBufferBookkeeping) {
  // Memory bound, bytes per parameter with bf16 gradients and Adam (docs/model.md,
  // "Optimizer step"). Megatron-Core (stages 0-2), per parameter updated: the bf16
  // gradient to an fp32 main gradient 2 + 4, the norm 4, the update 4 + 8 + 16,
  // the copy to the bf16 weight 4 + 2: 44; per parameter of the gradient buffer:
  // zeroing 2 and the 1/dp scaling 2 x 2: 6. Stage 0: 44 Psi + 6 Psi = 50 Psi;
  // stages 1, 2: 44 Psi / 8 + 6 Psi = 11.5 Psi. Stage 3 (FSDP): norm 4, clipping
  // 2 x 4, update 28 on Psi / 8: 5 Psi.
  const double t0 = optimizer_seconds(exec::simulate(zero(0)));
  for (const auto& [stage, share] : {std::pair{1, 11.5 / 50.0}, std::pair{2, 11.5 / 50.0}, std::pair{3, 5.0 / 50.0}}) {
    SCOPED_TRACE(stage);
    EXPECT_NEAR(optimizer_seconds(exec::simulate(zero(stage))), t0 * share, 1e-9);  // integer ns
  }
}

TEST(ZeroOptimizer, StepBytesPerParameterFollowMegatronCoreAndFsdp) {
  // fp32 gradients (the default), bf16 weights, Adam: Megatron-Core's shard
  // 4 + 28 + 6 = 38 (no conversion), its buffer 4 (zeroing) + 8 (scaling).
  const config::Scenario s = scenario::parse_scenario_text(
      R"({"cluster": {"gpu": "H100-SXM5-80GB", "num_nodes": 1}, "model": )" + kModel +
          R"(, "training": {"global_batch_size": 64, "micro_batch_size": 8}, "parallelism": {"dp": 8}})",
      "step.json");
  const workload::TransformerOps ops(s.model, s.training, s.training.micro_batch_size);
  const auto bytes = [&](workload::OptimizerScope scope) { return ops.optimizer_step(scope).work.bytes; };
  EXPECT_DOUBLE_EQ(bytes({1000.0, 1000.0, false, false}), 42'000.0);
  EXPECT_DOUBLE_EQ(bytes({1000.0, 8000.0, true, false}), 38'000.0 + 96'000.0);
  EXPECT_DOUBLE_EQ(bytes({1000.0, 0.0, false, true}), 40'000.0);
  // A parameter server's update alone: no gradient buffer of its own.
  EXPECT_DOUBLE_EQ(ops.optimizer_step(1000.0).work.bytes, 38'000.0);
}

TEST(ZeroOptimizer, EmbeddingGradientIsDenseThenAddedToMainGradUnlessSharded) {
  // docs/model.md, "Backward": PyTorch's embedding backward makes a dense bf16
  // gradient of the V x h table (zero-filled 2 V h, the b s = 4096 incoming rows
  // read and written 2 x 2 b s h); Megatron-Core's DDP hook adds it to the fp32
  // main_grad (2 + 4 + 4 per element); ZeRO-3 reduce-scatters it instead.
  const config::Scenario s = scenario::parse_scenario_text(
      R"({"cluster": {"gpu": "H100-SXM5-80GB", "num_nodes": 1}, "model": )" + kModel +
          R"(, "training": {"global_batch_size": 64, "micro_batch_size": 8}, "parallelism": {"dp": 8}})",
      "embedding.json");
  constexpr double kRows = 2.0 * 2 * 8 * 512 * 1024;
  const workload::TransformerOps ddp(s.model, s.training, 8);
  EXPECT_DOUBLE_EQ(ddp.embedding_backward().front().work.bytes, kRows + kEmbedding * (2 + 10));
  const workload::TransformerOps fsdp(s.model, s.training, 8, 1, false, 1, 1, false, workload::ContextComm::kP2p,
                                      workload::TpOverlap::kNone, true);
  EXPECT_DOUBLE_EQ(fsdp.embedding_backward().front().work.bytes, kRows + kEmbedding * 2);
  // Vocabulary-parallel over t = 2: each rank's table is V / 2 rows.
  const workload::TransformerOps split(s.model, s.training, 8, 2);
  EXPECT_DOUBLE_EQ(split.embedding_backward().front().work.bytes, kRows + kEmbedding / 2 * (2 + 10));
  // Through the iteration builder (bf16 gradients, so a 2 + 2 + 2 add): ZeRO-1 adds
  // to main_grad, ZeRO-3 over 8 ranks does not.
  const auto embedding_backward_bytes = [](const exec::SimulationOutput& out) {
    for (const workload::Task& t : out.iteration.graph.tasks())
      if (t.rank == 0 && out.iteration.graph.work(t).name == "embedding.backward")
        return out.iteration.graph.work(t).compute.bytes;
    return -1.0;
  };
  EXPECT_DOUBLE_EQ(embedding_backward_bytes(exec::simulate(zero(1))), kRows + kEmbedding * (2 + 6));
  EXPECT_DOUBLE_EQ(embedding_backward_bytes(exec::simulate(zero(3))), kRows + kEmbedding * 2);
}

TEST(ZeroIteration, WithFreeLinksStageOneSavesTheOptimizerShare) {
  const auto a = exec::simulate(zero(0, "", true));
  const auto b = exec::simulate(zero(1, "", true));
  const double saved = optimizer_seconds(a) - optimizer_seconds(b);
  EXPECT_GT(saved, 0.0);
  EXPECT_NEAR(core::to_seconds(b.timeline.makespan), core::to_seconds(a.timeline.makespan) - saved, 2e-6);
}

TEST(ZeroIteration, OverlappingTheParameterGatherHidesIt) {
  // ZeRO-1 gathers every parameter after the step; with overlap_param_gather the
  // next forward overlaps it, bucket by bucket.
  const auto sync = exec::simulate(zero(1, R"("overlap_grad_reduce": true, "ddp_bucket_size": 10000000)"));
  const auto over = exec::simulate(
      zero(1, R"("overlap_grad_reduce": true, "ddp_bucket_size": 10000000, "overlap_param_gather": true)"));
  EXPECT_GT(over.iteration.gradient_buckets, 1);
  EXPECT_LT(over.timeline.makespan, sync.timeline.makespan);
  // ZeRO-3 prefetching one unit ahead beats gathering just in time.
  EXPECT_LT(exec::simulate(zero(3, R"("overlap_param_gather": true)")).timeline.makespan,
            exec::simulate(zero(3)).timeline.makespan);
}

TEST(ZeroScenario, InvalidCombinationsNameTheField) {
  const auto error_path = [](const std::string& parallelism, const std::string& cluster = "") {
    const std::string text = R"({"cluster": {"gpu": "H100-SXM5-80GB", "num_nodes": 1)" + cluster +
                             R"(}, "model": )" + kModel + R"(, "training": {"global_batch_size": 64},
                             "parallelism": {)" + parallelism + "}}";
    try {
      static_cast<void>(scenario::parse_scenario_text(text, "zero.json"));
    } catch (const scenario::NotSupportedYet& e) {
      ADD_FAILURE() << "reported as a missing feature: " << e.what();
    } catch (const scenario::ScenarioError& e) {
      return e.json_path() + " | " + e.what();
    }
    return std::string("accepted");
  };
  for (int stage : {2, 3}) {
    const std::string e = error_path(R"("pp": 2, "zero_stage": )" + std::to_string(stage));
    EXPECT_EQ(e.rfind("/parallelism/zero_stage |", 0), 0u) << e;
    EXPECT_NE(e.find("pipeline"), std::string::npos) << e;
  }
  const std::string e = error_path(R"("overlap_param_gather": true)");
  EXPECT_EQ(e.rfind("/parallelism/overlap_param_gather |", 0), 0u) << e;
  EXPECT_NE(e.find("zero_stage"), std::string::npos) << e;
  // The distributed optimizer works with pipelines.
  EXPECT_EQ(error_path(R"("pp": 2, "zero_stage": 1, "overlap_param_gather": true)"), "accepted");
}

}  // namespace
}  // namespace trainsim
