// training.precision "fp4" (NVFP4, Transformer Engine's NVFP4BlockScaling as
// Megatron-Bridge's bf16_with_nvfp4_mixed runs it; docs/model.md, "FP4 recipes"): which
// kernels run in fp4, at which peak, and where the precision is refused.
#include <gtest/gtest.h>

#include <string>

#include "hardware/compute_model.h"
#include "hardware/precision.h"
#include "scenario/errors.h"
#include "graph_queries.h"
#include "test_scenarios.h"
#include "workload/iteration_builder.h"
#include "workload/memory.h"

namespace trainsim {
namespace {

TEST(Fp4Recipe, TheLinearLayersGemmsRunAtTheFp4PeakTheRestInBf16) {
  hw::KernelWork gemm;
  gemm.kind = hw::KernelClass::kMatmul;
  EXPECT_EQ(hw::kernel_precision(gemm, hw::Precision::kFp4), hw::Precision::kFp4);
  hw::KernelWork output_layer = gemm;
  output_layer.fp8 = false;  // not a Transformer Engine layer
  EXPECT_EQ(hw::kernel_precision(output_layer, hw::Precision::kFp4), hw::Precision::kBf16);
  hw::KernelWork attention;
  attention.kind = hw::KernelClass::kAttention;
  EXPECT_EQ(hw::kernel_precision(attention, hw::Precision::kFp4), hw::Precision::kBf16);
  EXPECT_DOUBLE_EQ(hw::bytes_per_element(hw::Precision::kFp4), 0.5625);
}

TEST(Fp4Recipe, AComputeBoundGemmTakesAQuarterOfItsBf16TimeOnB200) {
  // B200: 9 PFLOP/s fp4 against 2.25 bf16, the same efficiency curve (no fp4 GEMMs
  // measured): a GEMM of 2 x 8192^3 FLOPs, compute-bound either way, is 4x faster.
  const hw::GpuSpec b200 = testing::make_scenario(testing::kDense, "", "", 1, "\"B200\"").cluster.gpu;
  const hw::RooflineComputeModel model(b200);
  hw::KernelWork w;
  w.kind = hw::KernelClass::kMatmul;
  w.flops = 2.0 * 8192.0 * 8192.0 * 8192.0;
  w.bytes = 3.0 * 8192.0 * 8192.0 * 0.5625;
  const double fp4 = model.seconds(w, hw::Precision::kFp4);
  w.bytes = 3.0 * 8192.0 * 8192.0 * 2.0;
  EXPECT_DOUBLE_EQ(model.seconds(w, hw::Precision::kBf16) / fp4, 4.0);
}

void expect_refused(const std::string& training, const std::string& gpu, const std::string& pointer,
                    const std::string& words) {
  try {
    (void)testing::make_scenario(testing::kDense, training, "", 1, gpu);
    FAIL() << "accepted " << training << " on " << gpu;
  } catch (const scenario::ScenarioError& e) {
    EXPECT_NE(std::string(e.what()).find(pointer), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
  }
}

TEST(Fp4Recipe, RefusedWhereTheGpuHasNoFp4PeakAndItsKeysOutsideIt) {
  expect_refused(R"("precision": "fp4")", "\"H100-SXM5-80GB\"", "/training/precision", "no fp4 peak");
  expect_refused(R"("fp4_recipe": "nvfp4")", "\"B200\"", "/training/fp4_recipe", "precision is \"bf16\"");
  expect_refused(R"("fp4_param_gather": true)", "\"B200\"", "/training/fp4_param_gather", "precision is \"bf16\"");
  // The distributed optimizer gathers the NVFP4 weights: zero_stage 1 or 2.
  expect_refused(R"("precision": "fp4", "fp4_param_gather": true)", "\"B200\"", "/parallelism/zero_stage",
                 "training.fp4_param_gather is modeled over Megatron-LM's distributed optimizer");
  expect_refused(R"("precision": "fp4", "fp8_param_gather": true)", "\"B200\"", "/training/fp8_param_gather",
                 "precision is \"fp4\"");
}

// The distributed optimizer's parameter all-gathers of kDense (h 1024, 2 layers) with
// ZeRO-1 on 8 B200, rank 0's bytes.
double gathered_bytes(const std::string& training) {
  const auto s = testing::make_scenario(testing::kDense, R"("micro_batch_size": 2, "precision": "fp4")" + training,
                                        R"("zero_stage": 1)", 1, "\"B200\"");
  return testing::parameter_gather_bytes(
      workload::build_iteration_graph(s.model, s.training, s.parallel, s.cluster, 1).graph);
}

TEST(Fp4Recipe, Fp4ParamGatherMovesTheNvfp4WeightsRowwise) {
  // Megatron-Core's --fp4-param-gather: each fp4 GEMM weight (per layer QKV 1024 x
  // 3072, projection 1024 x 1024, MLP 1024 x 4096 and 4096 x 1024) goes as NVFP4,
  // 0.5625 bytes with its block scales instead of 2: 2 x 12,582,912 x 1.4375 bytes fewer.
  const double per_layer = 1024.0 * 3072 + 1024.0 * 1024 + 1024.0 * 4096 + 4096.0 * 1024;
  EXPECT_DOUBLE_EQ(gathered_bytes("") - gathered_bytes(R"(, "fp4_param_gather": true)"),
                   2 * per_layer * (2.0 - 0.5625));
  // The parameters are the NVFP4 copies: Transformer Engine caches none beside them.
  const auto s = testing::make_scenario(testing::kDense, R"("micro_batch_size": 2, "precision": "fp4",
                                        "fp4_param_gather": true)", R"("zero_stage": 1)", 1, "\"B200\"");
  EXPECT_EQ(workload::estimate_memory(s.model, s.training, s.parallel).quantized_weight_cache, 0.0);
}

}  // namespace
}  // namespace trainsim
