// fp8_param_gather (Megatron-Core's --fp8-param-gather; docs/model.md, "FP8 recipes"):
// the distributed optimizer all-gathers the weights of the fp8 GEMMs as fp8, one byte
// each, and everything else in 16 bits. Bytes counted by hand.
#include <gtest/gtest.h>

#include <string>

#include "scenario/errors.h"
#include "graph_queries.h"
#include "test_scenarios.h"
#include "workload/iteration_builder.h"
#include "workload/memory.h"

namespace trainsim {
namespace {

// kDense: h 1024, MHA, FFN 4h, 2 layers. Its fp8 GEMMs' weights per layer: QKV 1024 x
// 3072, output projection 1024 x 1024, MLP up 1024 x 4096 and down 4096 x 1024.
constexpr double kFp8WeightsPerLayer = 1024.0 * 3072 + 1024.0 * 1024 + 1024.0 * 4096 + 4096.0 * 1024;

double gathered_bytes(const std::string& training, const std::string& parallelism = R"("zero_stage": 1)") {
  const auto s = testing::make_scenario(testing::kDense, R"("micro_batch_size": 2, "precision": "fp8")" + training,
                                        parallelism);
  return testing::parameter_gather_bytes(
      workload::build_iteration_graph(s.model, s.training, s.parallel, s.cluster, 1).graph);
}

TEST(Fp8ParamGather, TheFp8GemmsWeightsGoInOneByte) {
  // The same buckets, each fp8 GEMM weight 1 byte instead of 2: 2 layers x 12,582,912 bytes fewer.
  const double bf16 = gathered_bytes("");
  const double fp8 = gathered_bytes(R"(, "fp8_param_gather": true)");
  EXPECT_DOUBLE_EQ(bf16 - fp8, 2 * kFp8WeightsPerLayer);
  // With overlap_param_gather the gathers run bucket by bucket; the bytes are the same.
  EXPECT_DOUBLE_EQ(gathered_bytes(R"(, "fp8_param_gather": true)",
                                  R"("zero_stage": 1, "overlap_grad_reduce": true, "overlap_param_gather": true)"),
                   fp8);
}

TEST(Fp8ParamGather, Mxfp8GathersBf16IntoTheGradientBuffer) {
  // Megatron-Bridge's MXFP8 recipes set reuse_grad_buf_for_mxfp8_param_ag: the gather
  // moves bf16 and each rank quantizes after it, so nothing is saved.
  const std::string mxfp8 = R"(, "fp8_recipe": "mxfp8")";
  EXPECT_DOUBLE_EQ(gathered_bytes(mxfp8 + R"(, "fp8_param_gather": true)"), gathered_bytes(mxfp8));
  const std::string tensorwise = R"(, "fp8_recipe": "tensorwise")";
  EXPECT_DOUBLE_EQ(gathered_bytes(tensorwise) - gathered_bytes(tensorwise + R"(, "fp8_param_gather": true)"),
                   2 * kFp8WeightsPerLayer);
}

TEST(Fp8ParamGather, LayersKeptInBf16AreGatheredInBf16) {
  // first_last_layers_bf16 (one and one) takes both layers out of fp8: nothing is saved.
  const std::string bf16_layers = R"(, "first_last_layers_bf16": true)";
  EXPECT_DOUBLE_EQ(gathered_bytes(bf16_layers + R"(, "fp8_param_gather": true)"), gathered_bytes(bf16_layers));
}

double weight_cache(const std::string& training, const std::string& parallelism = R"("zero_stage": 1)",
                    const std::string& gpu = "\"H100-SXM5-80GB\"") {
  const auto s = testing::make_scenario(testing::kDense, R"("micro_batch_size": 2)" + training, parallelism, 1, gpu);
  const workload::MemoryEstimate m = workload::estimate_memory(s.model, s.training, s.parallel);
  return m.quantized_weight_cache;
}

TEST(Fp8ParamGather, WithoutItTransformerEngineCachesAnFp8CopyAndTransposeOfEachWeight) {
  // 2 layers x 12,582,912 fp8 GEMM weights, each with a 1-byte copy and a 1-byte transpose.
  EXPECT_DOUBLE_EQ(weight_cache(R"(, "precision": "fp8")"), 2.0 * 2 * kFp8WeightsPerLayer);
  // fp8 parameters are those copies: nothing cached beside them.
  EXPECT_DOUBLE_EQ(weight_cache(R"(, "precision": "fp8", "fp8_param_gather": true)"), 0.0);
  // NVFP4: 0.5625 bytes each way.
  EXPECT_DOUBLE_EQ(weight_cache(R"(, "precision": "fp4")", R"("zero_stage": 1)", "\"B200\""),
                   2.0 * 0.5625 * 2 * kFp8WeightsPerLayer);
  // Layers kept in bf16 and FSDP (quantized per use) cache nothing; bf16 recipes neither.
  EXPECT_DOUBLE_EQ(weight_cache(R"(, "precision": "fp8", "first_last_layers_bf16": true)"), 0.0);
  EXPECT_DOUBLE_EQ(weight_cache(R"(, "precision": "fp8")", R"("zero_stage": 3)"), 0.0);
  EXPECT_DOUBLE_EQ(weight_cache(""), 0.0);
}

void expect_refused(const std::string& training, const std::string& parallelism, const std::string& pointer,
                    const std::string& words) {
  try {
    (void)testing::make_scenario(testing::kDense, R"("micro_batch_size": 2)" + training, parallelism);
    FAIL() << "accepted " << training << " with " << parallelism;
  } catch (const scenario::ScenarioError& e) {
    EXPECT_NE(std::string(e.what()).find(pointer), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
  }
}

TEST(Fp8ParamGather, NeedsAnFp8RecipeAndTheDistributedOptimizer) {
  expect_refused(R"(, "fp8_param_gather": true)", R"("zero_stage": 1)", "/training/fp8_param_gather",
                 "precision is \"bf16\"");
  expect_refused(R"(, "precision": "fp8", "fp8_param_gather": true)", "", "/parallelism/zero_stage",
                 "zero_stage 1 or 2 (found 0)");
  expect_refused(R"(, "precision": "fp8", "fp8_param_gather": true)", R"("zero_stage": 3)", "/parallelism/zero_stage",
                 "FSDP's quantized all-gathers");
  expect_refused(R"(, "fp8_recipe": "mxfp8")", "", "/training/fp8_recipe", "a setting of an fp8 recipe");
  expect_refused(R"(, "precision": "fp8", "fp8_recipe": "blockwise", "fp8_param_gather": true)", R"("zero_stage": 1)",
                 "/training/fp8_param_gather", "\"blockwise\" is not modeled yet");
}

}  // namespace
}  // namespace trainsim
