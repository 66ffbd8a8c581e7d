// The roofline compute model against its definition.
#include <cmath>
#include <gtest/gtest.h>

#include "hardware/compute_model.h"
#include "test_scenarios.h"

namespace trainsim {
namespace {

// The H100 preset's peaks and bandwidth; the tests give it curves of their own, so
// those run at the clock they are given (training_clock_ratio 1) unless a test says.
hw::GpuSpec h100() {
  hw::GpuSpec gpu = testing::make_scenario("\"gpt2-124m\"").cluster.gpu;
  gpu.training_clock_ratio = 1.0;
  return gpu;
}

TEST(Roofline, EfficiencyPassesThroughEveryMeasuredPoint) {
  const hw::GpuSpec gpu = h100();
  const hw::RooflineComputeModel model(gpu);
  for (const auto& p : gpu.matmul_efficiency) EXPECT_DOUBLE_EQ(model.matmul_efficiency(p.flops), p.efficiency);
  // 4096^3 bf16 on an H100 (PUBLIC_DATA.md): 220.0 us measured.
  const hw::KernelWork gemm{hw::KernelClass::kMatmul, 2.0 * 4096.0 * 4096.0 * 4096.0, 3 * 4096.0 * 4096.0 * 2, 1};
  EXPECT_NEAR(model.seconds(gemm, hw::Precision::kBf16) * 1e6, 220.0, 0.5);
}

TEST(Roofline, InterpolatesLinearlyInLogFlops) {
  hw::GpuSpec gpu = h100();
  gpu.matmul_efficiency = {{1e9, 0.2}, {1e11, 0.6}};
  const hw::RooflineComputeModel model(gpu);
  EXPECT_DOUBLE_EQ(model.matmul_efficiency(1e10), 0.4);  // halfway in log space
  EXPECT_DOUBLE_EQ(model.matmul_efficiency(1e13), 0.6);  // flat above
  // Below: the first segment's log-log slope, log(3)/log(100) per decade.
  EXPECT_NEAR(model.matmul_efficiency(1e7), 0.2 * std::pow(3.0, -1.0), 1e-12);
}

TEST(Roofline, MemoryBoundKernelsRunAtMeasuredBandwidth) {
  const hw::RooflineComputeModel model(h100());
  const hw::KernelWork copy{hw::KernelClass::kMemoryBound, 0.0, 2.9e9, 1};
  // 3350 GB/s x 0.866 measured = 2.9011 TB/s.
  EXPECT_DOUBLE_EQ(model.seconds(copy, hw::Precision::kBf16), 2.9e9 / (3350e9 * 0.866));
}

TEST(Roofline, GroupedGemmsUseThePerGemmEfficiency) {
  const hw::RooflineComputeModel model(h100());
  const double f = 1.374e11;
  const hw::KernelWork one{hw::KernelClass::kMatmul, f, 0.0, 1};
  const hw::KernelWork eight{hw::KernelClass::kMatmul, 8 * f, 0.0, 8};
  EXPECT_DOUBLE_EQ(model.seconds(eight, hw::Precision::kBf16), 8 * model.seconds(one, hw::Precision::kBf16));
}

TEST(Roofline, Fp8RecipesRunAttentionAndNonTeGemmsIn16Bits) {
  // docs/model.md, "FP8 recipes": Transformer Engine's linear layers in fp8,
  // attention and Megatron-Core's output layer in bf16. Without fp8 curves of its
  // own (Fp8GemmsTakeTheFp8Curves... checks those) an fp8 GEMM runs at the bf16 curve.
  hw::GpuSpec gpu = h100();
  gpu.matmul_efficiency_fp8.clear();
  gpu.matmul_efficiency_fp8_fast.clear();
  const hw::RooflineComputeModel model(gpu);
  hw::KernelWork gemm{hw::KernelClass::kMatmul, 1.1e12, 0.0};  // compute-bound, at the curve's last point
  EXPECT_EQ(hw::kernel_precision(gemm, hw::Precision::kFp8), hw::Precision::kFp8);
  EXPECT_EQ(hw::kernel_precision(gemm, hw::Precision::kBf16), hw::Precision::kBf16);
  // fp8 peak 1979 = 2 x 989 (bf16): an fp8 GEMM takes half the time.
  EXPECT_NEAR(model.seconds(gemm, hw::Precision::kFp8) * 1979.0, model.seconds(gemm, hw::Precision::kBf16) * 989.0,
              1e-15);
  hw::KernelWork output = gemm;
  output.fp8 = false;
  EXPECT_EQ(hw::kernel_precision(output, hw::Precision::kFp8), hw::Precision::kBf16);
  EXPECT_EQ(model.seconds(output, hw::Precision::kFp8), model.seconds(gemm, hw::Precision::kBf16));
  hw::KernelWork attention{hw::KernelClass::kAttention, 1.1e12, 0.0};
  EXPECT_EQ(hw::kernel_precision(attention, hw::Precision::kFp8), hw::Precision::kBf16);
  EXPECT_EQ(model.seconds(attention, hw::Precision::kFp8), model.seconds(attention, hw::Precision::kBf16));
  hw::KernelWork elementwise{hw::KernelClass::kMemoryBound, 0.0, 1e9};
  EXPECT_EQ(hw::kernel_precision(elementwise, hw::Precision::kFp8), hw::Precision::kFp8);
}

TEST(Roofline, FlashAttentionTakesTheCurvesOfItsHeadDimension) {
  // docs/model.md, "Attention efficiency": forward and backward curves per head
  // dimension, read like the matmul curve; other attention takes the matmul curve.
  hw::GpuSpec gpu = h100();
  gpu.matmul_efficiency = {{1e9, 0.7}};
  gpu.attention_efficiency = {{128, {{1e10, 0.2}, {1e12, 0.6}}, {{1e10, 0.1}, {1e12, 0.5}}}};
  const hw::RooflineComputeModel model(gpu);
  hw::KernelWork forward{hw::KernelClass::kAttention, 1e11, 0.0};
  forward.kernel = hw::KernelId::kAttentionForward;
  forward.head_dim = 128;
  EXPECT_DOUBLE_EQ(model.efficiency(forward, hw::Precision::kBf16), 0.4);  // halfway in log FLOPs
  EXPECT_DOUBLE_EQ(model.seconds(forward, hw::Precision::kBf16), 1e11 / (989e12 * 0.4));
  hw::KernelWork backward = forward;
  backward.kernel = hw::KernelId::kAttentionBackward;
  EXPECT_DOUBLE_EQ(model.efficiency(backward, hw::Precision::kBf16), 0.3);
  backward.kernel = hw::KernelId::kSdpaBackward;  // PyTorch's kernel: the same curves
  EXPECT_DOUBLE_EQ(model.efficiency(backward, hw::Precision::kBf16), 0.3);
  backward.flops = 1e14;
  EXPECT_DOUBLE_EQ(model.efficiency(backward, hw::Precision::kBf16), 0.5);  // flat beyond the largest point
  hw::KernelWork other_head = forward;
  other_head.head_dim = 64;
  EXPECT_DOUBLE_EQ(model.efficiency(other_head, hw::Precision::kBf16), 0.7);
  hw::KernelWork unfused = forward;
  unfused.kernel = hw::KernelId::kNone;  // per-head GEMMs
  EXPECT_DOUBLE_EQ(model.efficiency(unfused, hw::Precision::kBf16), 0.7);
}

TEST(Roofline, LatentAttentionTakesTheCurvesOfItsQueryAndValueWidths) {
  // docs/model.md, "Attention efficiency": multi-head latent attention (queries and
  // keys 192 wide per head, values 128) takes the entry of both widths; an entry
  // of 192 alone (values 192 too) is another kernel shape, and neither takes the
  // other's curves.
  hw::GpuSpec gpu = h100();
  gpu.matmul_efficiency = {{1e9, 0.7}};
  gpu.attention_efficiency = {{192, {{1e10, 0.2}}, {{1e10, 0.1}}},
                              {192, {{1e10, 0.4}}, {{1e10, 0.3}}, hw::AttentionKernel::kDefault, 128}};
  const hw::RooflineComputeModel model(gpu);
  hw::KernelWork latent{hw::KernelClass::kAttention, 1e11, 0.0};
  latent.kernel = hw::KernelId::kAttentionForward;
  latent.head_dim = 192;
  latent.value_head_dim = 128;
  EXPECT_DOUBLE_EQ(model.efficiency(latent, hw::Precision::kBf16), 0.4);
  latent.kernel = hw::KernelId::kAttentionBackward;
  EXPECT_DOUBLE_EQ(model.efficiency(latent, hw::Precision::kBf16), 0.3);
  hw::KernelWork square = latent;
  square.value_head_dim = 0;  // values as wide as the queries
  EXPECT_DOUBLE_EQ(model.efficiency(square, hw::Precision::kBf16), 0.1);
  square.value_head_dim = 192;
  EXPECT_DOUBLE_EQ(model.efficiency(square, hw::Precision::kBf16), 0.1);
  gpu.attention_efficiency.resize(1);
  EXPECT_DOUBLE_EQ(hw::RooflineComputeModel(gpu).efficiency(latent, hw::Precision::kBf16), 0.7);  // the matmul curve
}

TEST(Roofline, FlashAttention2TakesItsOwnCurvesElseTheDefaultKernels) {
  // docs/model.md, "Attention efficiency": training.attention_backend "flash2" runs
  // FlashAttention-2's kernels, priced by the GPU's "flash2" curves of the head
  // dimension; without them, by the GPU's own kernel's curves.
  hw::GpuSpec gpu = h100();
  gpu.matmul_efficiency = {{1e9, 0.7}};
  gpu.attention_efficiency = {{128, {{1e10, 0.2}, {1e12, 0.6}}, {{1e10, 0.1}, {1e12, 0.5}}},
                              {128, {{1e10, 0.1}, {1e12, 0.3}}, {{1e10, 0.05}, {1e12, 0.25}},
                               hw::AttentionKernel::kFlash2},
                              {64, {{1e10, 0.4}}, {{1e10, 0.3}}}};
  const hw::RooflineComputeModel model(gpu);
  hw::KernelWork forward{hw::KernelClass::kAttention, 1e11, 0.0};
  forward.kernel = hw::KernelId::kAttentionForward;
  forward.head_dim = 128;
  EXPECT_DOUBLE_EQ(model.efficiency(forward, hw::Precision::kBf16), 0.4);  // the default kernel
  forward.attention_kernel = hw::AttentionKernel::kFlash2;
  EXPECT_DOUBLE_EQ(model.efficiency(forward, hw::Precision::kBf16), 0.2);  // halfway: 0.1 .. 0.3
  EXPECT_DOUBLE_EQ(model.seconds(forward, hw::Precision::kBf16), 1e11 / (989e12 * 0.2));
  hw::KernelWork backward = forward;
  backward.kernel = hw::KernelId::kAttentionBackward;
  EXPECT_DOUBLE_EQ(model.efficiency(backward, hw::Precision::kBf16), 0.15);
  hw::KernelWork head64 = forward;  // no flash2 curves for head dim 64: the default kernel's
  head64.head_dim = 64;
  EXPECT_DOUBLE_EQ(model.efficiency(head64, hw::Precision::kBf16), 0.4);
  head64.head_dim = 32;  // no curves at all: the matmul curve
  EXPECT_DOUBLE_EQ(model.efficiency(head64, hw::Precision::kBf16), 0.7);
}

TEST(Roofline, CurvesMeasuredAtTheBoostClockRunAtTheTrainingClock) {
  // docs/model.md, "Clock under training load": the attention curves (either
  // kernel's) and the grouped curves are scaled by training_clock_ratio (0.8 here);
  // the dense matmul curve is not.
  hw::GpuSpec gpu = h100();
  gpu.matmul_efficiency = {{1e9, 0.7}};
  gpu.attention_efficiency = {{128, {{1e10, 0.5}}, {{1e10, 0.4}}},
                              {128, {{1e10, 0.3}}, {{1e10, 0.2}}, hw::AttentionKernel::kFlash2}};
  gpu.grouped_matmul_efficiency = hw::GroupedMatmulEfficiency{{{1e10, 0.4}}, {{1e10, 0.5}}, {{1e10, 0.25}}};
  gpu.training_clock_ratio = 0.8;
  const hw::RooflineComputeModel model(gpu);
  hw::KernelWork attention{hw::KernelClass::kAttention, 1e11, 0.0};
  attention.kernel = hw::KernelId::kAttentionForward;
  attention.head_dim = 128;
  EXPECT_DOUBLE_EQ(model.efficiency(attention, hw::Precision::kBf16), 0.5 * 0.8);
  attention.kernel = hw::KernelId::kAttentionBackward;
  EXPECT_DOUBLE_EQ(model.efficiency(attention, hw::Precision::kBf16), 0.4 * 0.8);
  attention.attention_kernel = hw::AttentionKernel::kFlash2;
  EXPECT_DOUBLE_EQ(model.efficiency(attention, hw::Precision::kBf16), 0.2 * 0.8);
  hw::KernelWork grouped{hw::KernelClass::kMatmul, 8e10, 0.0, 8};
  grouped.grouped = true;
  EXPECT_DOUBLE_EQ(model.seconds(grouped, hw::Precision::kBf16), 8e10 / (989e12 * 0.8 * 0.4));
  grouped.backward = true;
  grouped.flops = 16e10;
  EXPECT_DOUBLE_EQ(model.seconds(grouped, hw::Precision::kBf16),
                   8e10 / (989e12 * 0.8 * 0.5) + 8e10 / (989e12 * 0.8 * 0.25));
  hw::KernelWork dense{hw::KernelClass::kMatmul, 1e11, 0.0};
  EXPECT_DOUBLE_EQ(model.seconds(dense, hw::Precision::kBf16), 1e11 / (989e12 * 0.7));
  gpu.training_clock_ratio = 0.0;
  EXPECT_THROW(hw::RooflineComputeModel{gpu}, std::invalid_argument);
}

TEST(Roofline, Fp8GemmsTakeTheFp8CurvesForwardFastBackwardSplit) {
  // docs/model.md, "FP8 recipes": Transformer Engine's forward GEMM uses fast
  // accumulation, the two gradient GEMMs split accumulation; bf16 GEMMs and GPUs
  // without fp8 curves keep the matmul curve.
  hw::GpuSpec gpu = h100();
  gpu.matmul_efficiency = {{1e9, 0.7}};
  gpu.matmul_efficiency_fp8 = {{1e10, 0.2}, {1e12, 0.6}};
  gpu.matmul_efficiency_fp8_fast = {{1e10, 0.3}, {1e12, 0.7}};
  const hw::RooflineComputeModel model(gpu);
  hw::KernelWork forward{hw::KernelClass::kMatmul, 1e11, 0.0};
  EXPECT_DOUBLE_EQ(model.efficiency(forward, hw::Precision::kFp8), 0.5);  // fast, halfway in log FLOPs
  EXPECT_DOUBLE_EQ(model.seconds(forward, hw::Precision::kFp8), 1e11 / (1979e12 * 0.5));
  hw::KernelWork backward = forward;
  backward.backward = true;
  backward.flops = 2e11;  // its data and weight gradients, 1e11 each
  EXPECT_DOUBLE_EQ(model.efficiency(backward, hw::Precision::kFp8), 0.4);  // split accumulation
  EXPECT_DOUBLE_EQ(model.efficiency(forward, hw::Precision::kBf16), 0.7);
  hw::KernelWork output = forward;
  output.fp8 = false;  // a 16-bit GEMM under the fp8 recipe
  EXPECT_DOUBLE_EQ(model.seconds(output, hw::Precision::kFp8), 1e11 / (989e12 * 0.7));
  gpu.matmul_efficiency_fp8_fast.clear();  // only one fp8 curve: both directions take it
  EXPECT_DOUBLE_EQ(hw::RooflineComputeModel(gpu).efficiency(forward, hw::Precision::kFp8), 0.4);
}

TEST(Roofline, ABackwardMatmulRunsAtTheEfficiencyOfEachOfItsTwoGemms) {
  // docs/model.md, "Matmul efficiency": a backward op of 2F FLOPs is a data and a
  // weight gradient of F each, so it runs at eta(F), not eta(2F). Curve 0.4 at 1e10,
  // 0.6 at 1e12: F = 1e11 is halfway in log F (0.5), 2F would read 0.5301.
  hw::GpuSpec gpu = h100();
  gpu.matmul_efficiency = {{1e10, 0.4}, {1e12, 0.6}};
  const hw::RooflineComputeModel model(gpu);
  hw::KernelWork backward{hw::KernelClass::kMatmul, 2e11, 0.0};
  backward.backward = true;
  EXPECT_DOUBLE_EQ(model.efficiency(backward, hw::Precision::kBf16), 0.5);
  EXPECT_DOUBLE_EQ(model.seconds(backward, hw::Precision::kBf16), 2e11 / (989e12 * 0.5));
  backward.count = 4;  // four batched GEMMs: F = 2e11 / 4 / 2 = 2.5e10
  EXPECT_NEAR(model.efficiency(backward, hw::Precision::kBf16), 0.4 + 0.2 * std::log(2.5) / std::log(100.0), 1e-12);
  // One of the two gradients alone (a column-parallel backward split around its
  // reduction): one GEMM of F = 1e11, at 0.5.
  hw::KernelWork data{hw::KernelClass::kMatmul, 1e11, 0.0};
  data.backward = true;
  data.gradients = hw::Gradients::kData;
  EXPECT_DOUBLE_EQ(model.efficiency(data, hw::Precision::kBf16), 0.5);
  EXPECT_DOUBLE_EQ(model.seconds(data, hw::Precision::kBf16), 1e11 / (989e12 * 0.5));
}

TEST(Roofline, GroupedExpertGemmsTakeTheGroupedCurvesOfEachGemm) {
  // docs/model.md, "Grouped expert GEMMs": 8 experts of F = 1e10 each. Forward at
  // the forward curve (0.4 at 1e10); backward (2 x 8 F) half at the data-gradient
  // curve (0.5), half at the weight-gradient curve (0.25, halfway in log F between
  // 0.2 at 1e9 and 0.3 at 1e11). Ungrouped GEMMs and GPUs without the curves keep
  // the matmul curve (0.7).
  hw::GpuSpec gpu = h100();
  gpu.matmul_efficiency = {{1e9, 0.7}};
  gpu.grouped_matmul_efficiency = hw::GroupedMatmulEfficiency{
      {{1e10, 0.4}}, {{1e10, 0.5}}, {{1e9, 0.2}, {1e11, 0.3}}};
  const hw::RooflineComputeModel model(gpu);
  hw::KernelWork forward{hw::KernelClass::kMatmul, 8e10, 0.0, 8};
  forward.grouped = true;
  EXPECT_DOUBLE_EQ(model.seconds(forward, hw::Precision::kBf16), 8e10 / (989e12 * 0.4));
  hw::KernelWork backward = forward;
  backward.flops = 16e10;
  backward.backward = true;
  EXPECT_DOUBLE_EQ(model.seconds(backward, hw::Precision::kBf16),
                   8e10 / (989e12 * 0.5) + 8e10 / (989e12 * 0.25));
  hw::KernelWork weight = forward;  // the weight gradients alone: 8 GEMMs of 1e10
  weight.backward = true;
  weight.gradients = hw::Gradients::kWeight;
  EXPECT_DOUBLE_EQ(model.seconds(weight, hw::Precision::kBf16), 8e10 / (989e12 * 0.25));
  hw::KernelWork dense = forward;
  dense.grouped = false;
  EXPECT_DOUBLE_EQ(model.seconds(dense, hw::Precision::kBf16), 8e10 / (989e12 * 0.7));
  hw::GpuSpec plain = gpu;
  plain.grouped_matmul_efficiency.reset();
  EXPECT_DOUBLE_EQ(hw::RooflineComputeModel(plain).seconds(forward, hw::Precision::kBf16),
                   8e10 / (989e12 * 0.7));
}

TEST(Roofline, Fp8GroupedGemmsKeepMeasuredFp8CurvesOverTheBf16GroupedOnes) {
  // docs/model.md, "Grouped expert GEMMs": the grouped curves are bf16 measurements.
  // In fp8 on a GPU with fp8 GEMM curves each expert's GEMM takes those (forward at
  // the fast-accumulation curve: 0.3 at 1e10); without them, the grouped curves at
  // the fp8 peak (0.4 at 1e10, 1979 TFLOP/s).
  hw::GpuSpec gpu = h100();
  gpu.grouped_matmul_efficiency = hw::GroupedMatmulEfficiency{{{1e10, 0.4}}, {{1e10, 0.5}}, {{1e10, 0.25}}};
  gpu.matmul_efficiency_fp8 = {{1e10, 0.2}};
  gpu.matmul_efficiency_fp8_fast = {{1e10, 0.3}};
  hw::KernelWork forward{hw::KernelClass::kMatmul, 8e10, 0.0, 8};
  forward.grouped = true;
  EXPECT_DOUBLE_EQ(hw::RooflineComputeModel(gpu).seconds(forward, hw::Precision::kFp8), 8e10 / (1979e12 * 0.3));
  EXPECT_DOUBLE_EQ(hw::RooflineComputeModel(gpu).seconds(forward, hw::Precision::kBf16), 8e10 / (989e12 * 0.4));
  gpu.matmul_efficiency_fp8.clear();
  gpu.matmul_efficiency_fp8_fast.clear();
  EXPECT_DOUBLE_EQ(hw::RooflineComputeModel(gpu).seconds(forward, hw::Precision::kFp8), 8e10 / (1979e12 * 0.4));
}

TEST(Roofline, RejectsImpossibleSpecsAndWork) {
  hw::GpuSpec gpu = h100();
  gpu.matmul_efficiency = {{1e9, 1.5}};
  EXPECT_THROW(hw::RooflineComputeModel{gpu}, std::invalid_argument);
  gpu = h100();
  gpu.attention_efficiency = {{128, {{1e10, 0.5}}, {}}};
  EXPECT_THROW(hw::RooflineComputeModel{gpu}, std::invalid_argument);
  const hw::RooflineComputeModel model(h100());
  EXPECT_THROW((void)model.seconds({hw::KernelClass::kMatmul, -1.0, 0.0, 1}, hw::Precision::kBf16),
               std::invalid_argument);
}

}  // namespace
}  // namespace trainsim
