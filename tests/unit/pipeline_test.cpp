// Pipeline schedules against their closed forms with free communication:
// the bubble of GPipe and 1F1B is (p-1)/(m+p-1) of the iteration (Huang et al.
// 2019; Narayanan et al. 2021), interleaving v chunks makes it (p-1)/(v m+p-1)
// (Narayanan et al., SC'21, section 2.2), and the first stage keeps p (1F1B),
// m (GPipe) or p (1 + (p-1)/(p v)) (interleaved) micro-batches in flight.
#include <gtest/gtest.h>

#include "execution/simulate.h"
#include "test_scenarios.h"
#include "workload/iteration_builder.h"
#include "workload/iteration_layout.h"
#include "report/metrics.h"
#include "scenario/errors.h"
#include "scenario/reader.h"
#include "workload/memory.h"
#include "workload/parameters.h"
#include "workload/pipeline_schedule.h"

namespace trainsim {
namespace {

// Four stages of two equal layers each on one node whose links cost nothing;
// a 64-word vocabulary keeps the embedding and the head out of the balance.
config::Scenario free_pipeline(const std::string& schedule, const std::string& extra = "") {
  const std::string text = R"({"cluster": {"gpu": "H100-SXM5-80GB", "num_nodes": 1, "gpus_per_node": 4,
      "intra_node": {"bandwidth": "1000TB/s", "latency": "0us", "nvls_latency": "0us"}},
    "model": {"num_layers": 8, "hidden_size": 1024, "num_attention_heads": 8, "seq_length": 1024, "vocab_size": 64},
    "training": {"global_batch_size": 8, "micro_batch_size": 1},
    "parallelism": {"pp": 4, "dp": 1, "pipeline_schedule": ")" +
                           schedule + "\"" + extra + "}}";
  return scenario::parse_scenario_text(text, "pipeline.json");
}

double bubble_fraction(const config::Scenario& s) {
  const auto out = exec::simulate(s);
  const report::Metrics m = report::compute_metrics(s, out);
  EXPECT_EQ(m.breakdown_s.other, 0.0);
  return m.breakdown_s.pipeline_bubble / (m.iteration_time_s - m.breakdown_s.optimizer);
}

TEST(Pipeline, OneFOneBBubbleIsPMinusOneOverMPlusPMinusOne) {
  EXPECT_NEAR(bubble_fraction(free_pipeline("1f1b")), 3.0 / 11.0, 0.01 * 3.0 / 11.0);
}

TEST(Pipeline, GpipeHasTheSameBubble) {
  EXPECT_NEAR(bubble_fraction(free_pipeline("gpipe")), 3.0 / 11.0, 0.01 * 3.0 / 11.0);
}

TEST(Pipeline, InterleavingDividesTheBubbleByV) {
  // v = 2 chunks of one layer per stage: (p-1)/(v m + p-1) = 3/19. The
  // remaining 2% are the extra activation transfers' start-up (one per chunk).
  const double f = bubble_fraction(free_pipeline("interleaved_1f1b", R"(, "num_layers_per_virtual_pipeline_stage": 1)"));
  EXPECT_NEAR(f, 3.0 / 19.0, 0.03 * 3.0 / 19.0);
}

TEST(Pipeline, FirstStageKeepsTheScheduleInFlightMicroBatches) {
  const auto in_flight = [](const config::Scenario& s) {
    return workload::memory_per_stage(s.model, s.training, s.parallel).front().in_flight_microbatches;
  };
  EXPECT_DOUBLE_EQ(in_flight(free_pipeline("1f1b")), 4.0);
  EXPECT_DOUBLE_EQ(in_flight(free_pipeline("gpipe")), 8.0);
  // Megatron-LM's theoretical memory: p (1 + (p-1)/(p v)) = 4 x 1.375.
  EXPECT_DOUBLE_EQ(in_flight(free_pipeline("interleaved_1f1b", R"(, "num_layers_per_virtual_pipeline_stage": 1)")),
                   5.5);
  // The last stage of 1F1B runs each backward right after its forward.
  EXPECT_DOUBLE_EQ(workload::memory_per_stage(free_pipeline("1f1b").model, free_pipeline("1f1b").training,
                                              free_pipeline("1f1b").parallel)
                       .back()
                       .in_flight_microbatches,
                   1.0);
}

TEST(Pipeline, UnevenSplitPutsTheExtraLayersFirst) {
  workload::ParallelConfig p;
  p.pipeline = 4;
  EXPECT_EQ(workload::virtual_stage_layers(10, p), (std::vector<long long>{3, 3, 2, 2}));
  EXPECT_EQ(workload::virtual_stage_layers(8, p), (std::vector<long long>{2, 2, 2, 2}));
  EXPECT_THROW((void)workload::virtual_stage_layers(3, p), workload::PipelineSplitError);  // stage 3 would be empty
}

TEST(Pipeline, OneFOneBWarmupThenAlternates) {
  // Stage 1 of 4 with 6 micro-batches: p - s - 1 = 2 forwards of warm-up.
  const auto steps = workload::pipeline_steps(workload::PipelineSchedule::k1F1B, 4, 1, 6, 1);
  std::string order;
  for (const auto& st : steps) order += (st.forward ? "F" : "B") + std::to_string(st.microbatch) + " ";
  EXPECT_EQ(order, "F0 F1 F2 B0 F3 B1 F4 B2 F5 B3 B4 B5 ");
}

}  // namespace
}  // namespace trainsim

namespace trainsim {
namespace {

TEST(InterleavedUneven, LlamaThreeLayersOnSixteenStagesLeaveTheLastVirtualStagesShort) {
  // 126 layers, 16 stages of at most 8 layers, 2 per virtual stage: 4 chunks, 64
  // virtual stages; 126 = 62 x 2 + 2 x 1, the short ones last.
  const auto s = testing::make_scenario(
      R"({"num_layers": 126, "hidden_size": 256, "num_attention_heads": 4, "seq_length": 128, "vocab_size": 1024})",
      R"("micro_batch_size": 1)", R"("pp": 16, "vpp": 2)", 2);
  const auto g = workload::build_iteration_graph(s.model, s.training, s.parallel, s.cluster, 1);
  ASSERT_EQ(g.layers_per_virtual_stage.size(), 64U);
  for (std::size_t j = 0; j < 64; ++j) EXPECT_EQ(g.layers_per_virtual_stage[j], j < 62 ? 2 : 1) << j;
}

}  // namespace
}  // namespace trainsim

namespace trainsim {
namespace {

// Megatron-Core's get_num_layers_to_build (megatron/core/transformer/transformer_block.py).
workload::ParallelConfig split(int pp, std::optional<int> chunks) {
  workload::ParallelConfig p;
  p.pipeline = pp;
  p.virtual_stages_per_rank = chunks;
  return p;
}

TEST(PipelineSplit, EmbeddingAndLossCountedAsLayersOfTheSplit) {
  // Llama 3.1 405B as Megatron-Bridge's recipe runs it on PP 16, VPP 8: 126 + 2 = 128
  // = 16 x 8, one per chunk; the first virtual stage holds only the embedding, the last
  // only the loss.
  workload::ParallelConfig p = split(16, 8);
  p.embedding_in_split = p.loss_in_split = true;
  const std::vector<long long> l = workload::virtual_stage_layers(126, p);
  ASSERT_EQ(l.size(), 128U);
  for (std::size_t j = 0; j < l.size(); ++j) EXPECT_EQ(l[j], j == 0 || j == 127 ? 0 : 1) << j;
  // PP 8, VPP 8 (its 128-GPU B200 recipe): 128 / 8 = 16 per stage, 2 per chunk, less one
  // at each end: 1 + 62 x 2 + 1 = 126.
  p = split(8, 8);
  p.embedding_in_split = p.loss_in_split = true;
  const std::vector<long long> b = workload::virtual_stage_layers(126, p);
  ASSERT_EQ(b.size(), 64U);
  EXPECT_EQ(b.front(), 1);
  EXPECT_EQ(b.back(), 1);
  EXPECT_EQ(b[1], 2);
  EXPECT_EQ(b[62], 2);
  // Without virtual stages: 96 layers + the embedding on 97 ... not divisible by 4.
  p = split(4, std::nullopt);
  p.embedding_in_split = true;
  try {
    (void)workload::virtual_stage_layers(96, p);
    FAIL() << "accepted 97 counted layers on 4 stages";
  } catch (const workload::PipelineSplitError& e) {
    EXPECT_EQ(e.key, "account_for_embedding_in_pipeline_split");
    EXPECT_STREQ(e.what(), "num_layers 96 plus the embedding and loss counted in the split (97) must divide by "
                           "pipeline_model_parallel_size 4");
  }
  // 95 + 1 = 96 on 4 stages: 23 layers and the embedding, then 24, 24, 24.
  EXPECT_EQ(workload::virtual_stage_layers(95, p), (std::vector<long long>{23, 24, 24, 24}));
}

TEST(PipelineSplit, FirstAndLastStagesTakeTheirOwnLayers) {
  // 94 layers (Qwen3-235B) on PP 8 with 10 on the first and 12 on the last: 72 over the
  // six others, 12 each; with 2 chunks per stage, 5 / 6 per chunk.
  workload::ParallelConfig p = split(8, std::nullopt);
  p.first_stage_layers = 10;
  p.last_stage_layers = 12;
  EXPECT_EQ(workload::virtual_stage_layers(94, p), (std::vector<long long>{10, 12, 12, 12, 12, 12, 12, 12}));
  p.virtual_stages_per_rank = 2;
  const std::vector<long long> v = workload::virtual_stage_layers(94, p);
  EXPECT_EQ(v, (std::vector<long long>{5, 6, 6, 6, 6, 6, 6, 6, 5, 6, 6, 6, 6, 6, 6, 6}));
  // Only the last given: 94 - 10 = 84 over 7 stages.
  p = split(8, std::nullopt);
  p.last_stage_layers = 10;
  EXPECT_EQ(workload::virtual_stage_layers(94, p), (std::vector<long long>{12, 12, 12, 12, 12, 12, 12, 10}));
  // 94 - 11 = 83 does not divide over 7 stages.
  p.last_stage_layers = 11;
  EXPECT_THROW((void)workload::virtual_stage_layers(94, p), workload::PipelineSplitError);
  // A stage's layers must divide into its chunks: 11 on the first stage, 2 chunks.
  p = split(8, 2);
  p.first_stage_layers = 11;
  p.last_stage_layers = 11;
  try {
    (void)workload::virtual_stage_layers(94, p);
    FAIL() << "accepted 11 layers in 2 chunks";
  } catch (const workload::PipelineSplitError& e) {
    EXPECT_EQ(e.key, "virtual_pipeline_model_parallel_size");
    EXPECT_STREQ(e.what(), "pipeline stage 0 holds 11 layers, which do not divide into its 2 model chunks");
  }
  // Megatron-Core refuses uneven first/last stages together with the accounted split.
  p = split(8, std::nullopt);
  p.first_stage_layers = 10;
  p.embedding_in_split = true;
  EXPECT_THROW((void)workload::virtual_stage_layers(94, p), workload::PipelineSplitError);
}

TEST(PipelineSplit, AnEmbeddingOnlyFirstChunkBuildsAndHoldsNoLayerParameters) {
  // 6 layers + embedding + loss = 8 on 4 stages x 2 chunks, one each: chunk (0, 0) holds
  // only the embedding, (3, 1) only the loss. The graph builds; stage 1 holds 2 layers,
  // stage 0 one and the embedding, stage 3 one, the final norm and the output layer.
  auto s = testing::make_scenario(
      R"({"num_layers": 6, "hidden_size": 256, "num_attention_heads": 4, "seq_length": 128, "vocab_size": 1024,
          "untie_embeddings_and_output_weights": true})",
      R"("micro_batch_size": 1)",
      R"("pp": 4, "virtual_pipeline_model_parallel_size": 2, "account_for_embedding_in_pipeline_split": true,
          "account_for_loss_in_pipeline_split": true)",
      1);
  const auto g = workload::build_iteration_graph(s.model, s.training, s.parallel, s.cluster, 1);
  EXPECT_EQ(g.layers_per_virtual_stage, (std::vector<long long>{0, 1, 1, 1, 1, 1, 1, 0}));
  const double layer = workload::stage_parameters(s.model, s.parallel, 1) / 2.0;
  const workload::ParameterCount c = workload::count_parameters(s.model);
  EXPECT_GT(c.output_layer, 0.0);
  EXPECT_DOUBLE_EQ(workload::stage_parameters(s.model, s.parallel, 0),
                   layer + c.word_embeddings + c.position_embeddings);
  EXPECT_DOUBLE_EQ(workload::stage_parameters(s.model, s.parallel, 3), layer + c.final_norm + c.output_layer);
}

// Megatron-Core's pipeline_model_parallel_layout: 5 layers as "E|tt|tt|tL" on 2 stages
// gives 4 virtual stages (2 chunks each, chunk-major): v0 the embedding alone (stage 0),
// v1 layers 0-1 (stage 1), v2 layers 2-3 (stage 0), v3 layer 4 and the loss (stage 1).
TEST(PipelineLayout, MegatronCoreLayoutStringPlacesEveryLayer) {
  const std::string model = R"({"num_layers": 5, "hidden_size": 256, "num_attention_heads": 4, "seq_length": 128,
                                 "vocab_size": 1024})";
  auto s = testing::make_scenario(model, R"("micro_batch_size": 1)",
                                  R"("pp": 2, "pipeline_model_parallel_layout": "E|(tt|)*2,tL")", 1);
  EXPECT_EQ(workload::virtual_stage_layers(5, s.parallel), (std::vector<long long>{0, 2, 2, 1}));
  EXPECT_EQ(workload::model_chunks(5, s.parallel), 2);
  EXPECT_EQ(s.parallel.schedule, workload::PipelineSchedule::kInterleaved1F1B);
  EXPECT_EQ(workload::stage_layer_indices(5, s.parallel, 0), (std::vector<long long>{2, 3}));
  EXPECT_EQ(workload::stage_layer_indices(5, s.parallel, 1), (std::vector<long long>{0, 1, 4}));
  const auto g = workload::build_iteration_graph(s.model, s.training, s.parallel, s.cluster, 1);
  EXPECT_EQ(g.layers_per_virtual_stage, (std::vector<long long>{0, 2, 2, 1}));
  // One chunk per stage: "Et*2|t*3L" is 2 + 3.
  auto plain = testing::make_scenario(model, R"("micro_batch_size": 1)",
                                      R"("pp": 2, "pipeline_model_parallel_layout": "Et*2|t*3L")", 1);
  EXPECT_EQ(workload::virtual_stage_layers(5, plain.parallel), (std::vector<long long>{2, 3}));
  EXPECT_EQ(plain.parallel.schedule, workload::PipelineSchedule::k1F1B);

  const auto refused = [&](const std::string& parallelism, const std::string& text) {
    try {
      testing::make_scenario(model, R"("micro_batch_size": 1)", parallelism, 1);
      ADD_FAILURE() << parallelism << " was accepted";
    } catch (const scenario::ScenarioError& e) {
      EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("pipeline_model_parallel_layout"), std::string::npos) << e.what();
    }
  };
  refused(R"("pp": 2, "pipeline_model_parallel_layout": "Ett|ttL")", "places 4 decoder layers");
  refused(R"("pp": 2, "pipeline_model_parallel_layout": "Ett|tt|tL")", "does not divide");
  refused(R"("pp": 2, "pipeline_model_parallel_layout": "tEt|tttL")", "must open the first stage");
  refused(R"("pp": 2, "pipeline_model_parallel_layout": "Ett|ttt|m|L")", "multi-token prediction");
  refused(R"("pp": 2, "pipeline_model_parallel_layout": "Ett|tttL", "account_for_embedding_in_pipeline_split": true)",
          "places every layer itself");
}

}  // namespace
}  // namespace trainsim

namespace trainsim {
namespace {

TEST(PipelineSends, EachTpRankSendsItsWholeCopyUnlessSequenceParallelOrScatterGather) {
  // kDense (h 1024, s 512), micro-batch 2, bf16 (2 bytes): b s h e = 2 x 512 x 1024 x 2
  // = 2,097,152 bytes a stage's output per TP rank. TP 4 x PP 2 on 8 GPUs.
  const auto layout = [](const std::string& extra) {
    const config::Scenario s = testing::make_scenario(
        testing::kDense, R"("micro_batch_size": 2)",
        R"("tensor_model_parallel_size": 4, "pipeline_model_parallel_size": 2, "data_parallel_size": 1)" + extra);
    return workload::iteration_layout(s.model, s.training, s.parallel, s.cluster);
  };
  // Megatron-Core's get_tensor_shapes: the whole tensor without sequence parallelism,
  EXPECT_DOUBLE_EQ(layout("").p2p_bytes, 2097152.0);
  // its sequence shard with it,
  EXPECT_DOUBLE_EQ(layout(R"(, "sequence_parallel": true)").p2p_bytes, 2097152.0 / 4);
  // and Megatron-LM's legacy scatter-gather a 1/t slice without it.
  EXPECT_DOUBLE_EQ(layout(R"(, "scatter_gather_tensors_in_pipeline": true)").p2p_bytes, 2097152.0 / 4);
}

}  // namespace
}  // namespace trainsim
