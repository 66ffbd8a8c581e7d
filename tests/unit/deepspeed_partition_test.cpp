// DeepSpeed's pipeline partition (workload/deepspeed_partition.h) against splits
// derived by hand with DeepSpeed's algorithm (deepspeed/runtime/utils.py).
#include <gtest/gtest.h>

#include <stdexcept>

#include "test_scenarios.h"
#include "workload/deepspeed_partition.h"
#include "workload/pipeline_schedule.h"

namespace trainsim {
namespace {

using Parts = std::vector<long long>;

TEST(DeepSpeedPartition, EqualWeightsCutEveryNItems) {
  EXPECT_EQ(workload::partition_balanced(std::vector<double>(72, 1.0), 12),
            (Parts{0, 6, 12, 18, 24, 30, 36, 42, 48, 54, 60, 66, 72}));
  // Fewer items than parts: partition_uniform's min(p, items).
  EXPECT_EQ(workload::partition_balanced({1.0, 1.0}, 3), (Parts{0, 1, 2, 2}));
}

TEST(DeepSpeedPartition, HeavyEndsGetStagesOfTheirOwn) {
  // Embedding 10, 20 layers of 1, a norm of 0, output 10 over 4 stages: the
  // heaviest part can be no lighter than 10, so the probe at just over 10 cuts
  // before the first layer (prefix 11), after layer 10 (prefix 20 < 20 + eps) and
  // after the norm (prefix 30): [E] [t1..t10] [t11..t20, norm] [out].
  std::vector<double> w{10.0};
  for (int i = 0; i < 20; ++i) w.push_back(1.0);
  w.push_back(0.0);
  w.push_back(10.0);
  EXPECT_EQ(workload::partition_balanced(w, 4), (Parts{0, 1, 11, 22, 23}));
}

TEST(DeepSpeedPartition, BloomTypeTransformerOrEmbedding) {
  // BLOOM-176B (bigscience tr11-176B-ml: --pp-partition-method
  // 'type:transformer|embedding', PP 12): 70 ParallelTransformerLayerPipe and two
  // EmbeddingPipe specs of weight 1, 6 a stage: the first stage holds the embedding
  // and 5 layers, the last 5 layers and the output.
  const std::string bloom = R"({"num_layers": 70, "hidden_size": 1024, "num_attention_heads": 16,
                                 "seq_length": 2048, "vocab_size": 250880})";
  const auto s = testing::make_scenario(bloom, "", "", 1);
  const Parts layers = workload::deepspeed_stage_layers(s.model, 4, 12, "type:transformer|embedding");
  EXPECT_EQ(layers, (Parts{5, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 5}));
  EXPECT_THROW((void)workload::deepspeed_stage_layers(s.model, 4, 12, "uniform"), std::invalid_argument);
  EXPECT_THROW((void)workload::deepspeed_stage_layers(s.model, 4, 12, "type:norm"), std::invalid_argument);
  EXPECT_THROW((void)workload::deepspeed_stage_layers(s.model, 4, 12, "type:(("), std::invalid_argument);
}

TEST(DeepSpeedPartition, ByParametersALightEmbeddingLeavesAnEvenSplit) {
  // A vocabulary of 8 and rotary positions: the embedding and output weigh 512
  // parameters against a layer's 12 h^2 + 13 h = 49,984, so 8 layers on 4 stages
  // go 2 a stage (the bottleneck is two layers plus the output and the norm).
  const std::string model = R"({"num_layers": 8, "hidden_size": 64, "num_attention_heads": 4,
                                  "seq_length": 128, "vocab_size": 8, "position_embedding_type": "rope"})";
  const auto s = testing::make_scenario(model);
  EXPECT_EQ(workload::deepspeed_stage_layers(s.model, 1, 4, "parameters"), (Parts{2, 2, 2, 2}));
  // A vocabulary of 7,810 (7,810 x 64 = 499,840, ten layers' worth) on 3 stages: no
  // stage can be lighter than the embedding, and at just over 499,840 the probe cuts
  // [E] [8 layers (399,872) + norm] [output].
  const std::string heavy = R"({"num_layers": 8, "hidden_size": 64, "num_attention_heads": 4,
                                  "seq_length": 128, "vocab_size": 7810, "position_embedding_type": "rope"})";
  const auto h = testing::make_scenario(heavy);
  EXPECT_EQ(workload::deepspeed_stage_layers(h.model, 1, 3, "parameters"), (Parts{0, 8, 0}));
}

TEST(DeepSpeedPartition, TheScenarioKeyGivesTheStagesTheirLayers) {
  const std::string model = R"({"num_layers": 22, "hidden_size": 1024, "num_attention_heads": 16,
                                  "seq_length": 2048, "vocab_size": 50304})";
  const auto s = testing::make_scenario(model, "", R"("pp": 4, "pp_partition_method": "type:transformer|embedding")");
  // 24 items of weight 1 over 4 stages: 6 each; E + 5, 6, 6, 5 + output.
  EXPECT_EQ(workload::virtual_stage_layers(s.model.num_layers, s.parallel), (Parts{5, 6, 6, 5}));
  try {
    (void)testing::make_scenario(model, "", R"("pp": 4, "partition_method": "type:transformer",
                                              "decoder_first_pipeline_num_layers": 4)");
    FAIL() << "partition_method with another split key was accepted";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("/parallelism/partition_method"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace trainsim
