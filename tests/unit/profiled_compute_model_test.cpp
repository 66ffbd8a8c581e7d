// The profiled compute model against hand-built profiles whose answers are closed
// forms (docs/model.md, "Calibrated costs").
#include <cmath>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "hardware/calibration_profile.h"
#include "hardware/profiled_compute_model.h"
#include "test_scenarios.h"

namespace trainsim::hw {
namespace {

using ::testing::HasSubstr;

GpuSpec h100() { return testing::make_scenario("\"gpt2-124m\"").cluster.gpu; }

constexpr double kT = 1e12;  // TFLOP/s

// A bf16 grid m, n, k in {1024, 4096} whose achieved rate is additive:
// 100 TFLOP/s, +40 at m = 4096, +20 at n = 4096, +80 at k = 4096. Trilinear
// interpolation of an additive function is additive, so a query at weights
// (wm, wn, wk) in log space gets 100 + 40 wm + 20 wn + 80 wk exactly.
double grid_rate(double m, double n, double k) {
  return (100.0 + (m == 4096.0 ? 40.0 : 0.0) + (n == 4096.0 ? 20.0 : 0.0) + (k == 4096.0 ? 80.0 : 0.0)) * kT;
}

CalibrationProfile grid_profile() {
  CalibrationProfile p;
  p.device.name = "NVIDIA H100 80GB HBM3";
  for (double m : {1024.0, 4096.0})
    for (double n : {1024.0, 4096.0})
      for (double k : {1024.0, 4096.0}) p.gemm.push_back({Precision::kBf16, m, n, k, 2.0 * m * n * k / grid_rate(m, n, k)});
  return p;
}

KernelWork gemm(double m, double n, double k, int count = 1, bool backward = false) {
  KernelWork w{KernelClass::kMatmul, 2.0 * m * n * k * count * (backward ? 2.0 : 1.0),
               (m * k + k * n + m * n) * 2.0 * count * (backward ? 2.0 : 1.0), count};
  w.m = m;
  w.n = n;
  w.k = k;
  w.backward = backward;
  return w;
}

KernelWork memory(KernelId id, double bytes) {
  KernelWork w{KernelClass::kMemoryBound, 0.0, bytes, 1};
  w.kernel = id;
  return w;
}

KernelWork flash(KernelId id, double flops, int head_dim) {
  KernelWork w{KernelClass::kAttention, flops, 1e6, 1};
  w.kernel = id;
  w.head_dim = head_dim;
  return w;
}

TEST(ProfiledGemm, AnExactShapeTakesItsMeasuredTime) {
  const CalibrationProfile p = grid_profile();
  const ProfiledComputeModel model(p, h100());
  for (const GemmRow& r : p.gemm) {
    const CostLookup c = model.lookup(gemm(r.m, r.n, r.k), Precision::kBf16);
    EXPECT_TRUE(c.measured());
    EXPECT_EQ(c.seconds, r.seconds);
  }
}

TEST(ProfiledGemm, HalfwayInLogSpaceAlongKIsTheMeanRate) {
  // m = n = 1024 on the grid; k = 2048 halfway between 1024 and 4096 in ln k:
  // 100 and 180 TFLOP/s -> 140.
  const ProfiledComputeModel model(grid_profile(), h100());
  const double flops = 2.0 * 1024 * 1024 * 2048;
  EXPECT_DOUBLE_EQ(model.seconds(gemm(1024, 1024, 2048), Precision::kBf16), flops / (140.0 * kT));
}

TEST(ProfiledGemm, TrilinearInsideTheGrid) {
  const ProfiledComputeModel model(grid_profile(), h100());
  // Centre of the cube: 100 + 40/2 + 20/2 + 80/2 = 170 TFLOP/s.
  EXPECT_DOUBLE_EQ(model.seconds(gemm(2048, 2048, 2048), Precision::kBf16), 2.0 * 2048 * 2048 * 2048 / (170.0 * kT));
  // n a quarter of the way in log space (1024 x 4^0.25), m halfway, k on 1024:
  // 100 + 20 + 5 + 0 = 125 TFLOP/s.
  const double n = 1024.0 * std::pow(4.0, 0.25);
  EXPECT_NEAR(model.seconds(gemm(2048, n, 1024), Precision::kBf16) * 125.0 * kT / (2.0 * 2048 * n * 1024), 1.0,
              1e-12);
}

// The grid's rows by octave of F = 2 m n k: 2^31 (all 1024) at 100 TFLOP/s;
// 2^33 (one axis 4096) at 140, 120, 180 -> median 140; 2^35 (two) at 160, 220,
// 200 -> median 200; 2^37 at 240. Efficiency = rate / 989 TFLOP/s (H100 bf16).
TEST(ProfiledGemm, OutsideTheGridIsTheRooflineWithTheProfilesEfficiencyCurve) {
  const ProfiledComputeModel model(grid_profile(), h100());
  // F = 2^34, halfway between the 2^33 and 2^35 points in ln F: 170 TFLOP/s.
  const KernelWork wide = gemm(8192, 1024, 1024);
  const CostLookup c = model.lookup(wide, Precision::kBf16);
  EXPECT_EQ(c.source, CostSource::kOutsideGemmGrid);
  EXPECT_NEAR(c.seconds * 170.0 * kT / wide.flops, 1.0, 1e-12);
  // F = 2^30, below the first point: its log-log slope p = ln 1.4 / ln 4 goes on,
  // eta = (100/989) (1/2)^p = (100/989) / sqrt(1.4).
  const KernelWork narrow = gemm(1024, 512, 1024);
  EXPECT_EQ(model.lookup(narrow, Precision::kBf16).source, CostSource::kOutsideGemmGrid);
  EXPECT_NEAR(model.seconds(narrow, Precision::kBf16) * (100.0 / std::sqrt(1.4)) * kT / narrow.flops, 1.0, 1e-12);
  // F = 2^40, above the last point: flat at 240 TFLOP/s.
  const KernelWork big = gemm(16384, 8192, 4096);
  EXPECT_NEAR(model.seconds(big, Precision::kBf16) * 240.0 * kT / big.flops, 1.0, 1e-12);
  EXPECT_EQ(model.fallback_reason(wide, Precision::kBf16),
            "gemm bf16 m=8192 n=1024 k=1024: outside the measured grid (m 1024..4096, n 1024..4096, k 1024..4096)");
  EXPECT_EQ(model.fallback_efficiency(Precision::kBf16).matmul_points, 4U);
}

TEST(ProfiledGemm, ADtypeWithoutGemmsIsTheSpecsRoofline) {
  const ProfiledComputeModel model(grid_profile(), h100());
  const RooflineComputeModel roofline(h100());
  const CostLookup fp16 = model.lookup(gemm(1024, 1024, 1024), Precision::kFp16);
  EXPECT_EQ(fp16.source, CostSource::kNoGemmRows);
  EXPECT_EQ(fp16.seconds, roofline.seconds(gemm(1024, 1024, 1024), Precision::kFp16));
  EXPECT_EQ(model.fallback_reason(gemm(1024, 1024, 1024), Precision::kFp16), "gemm fp16: the profile has no fp16 GEMMs");
  EXPECT_EQ(model.fallback_efficiency(Precision::kFp16).matmul_points, 0U);
  EXPECT_FALSE(model.fallback_efficiency(Precision::kFp16).memory_bandwidth.has_value());
}

TEST(ProfiledGemm, AMissingCornerFallsBackOnlyWhereItIsNeeded) {
  CalibrationProfile p = grid_profile();
  std::erase_if(p.gemm, [](const GemmRow& r) { return r.m == 4096 && r.n == 4096 && r.k == 4096; });
  const ProfiledComputeModel model(p, h100());
  EXPECT_EQ(model.lookup(gemm(2048, 2048, 2048), Precision::kBf16).source, CostSource::kGemmCornerMissing);
  EXPECT_THAT(model.fallback_reason(gemm(2048, 2048, 2048), Precision::kBf16),
              HasSubstr("a bracketing grid point is not measured"));
  // On the k = 1024 plane only the 4 corners there count: 100 + 20 + 10 = 130.
  EXPECT_DOUBLE_EQ(model.seconds(gemm(2048, 2048, 1024), Precision::kBf16), 2.0 * 2048 * 2048 * 1024 / (130.0 * kT));
}

TEST(ProfiledGemm, ExtraShapesOffTheGridDoNotBreakIt) {
  // The harness measures the grid plus the shapes of real models.
  CalibrationProfile p = grid_profile();
  p.gemm.push_back({Precision::kBf16, 3000, 2304, 768, 5e-5});
  p.gemm.push_back({Precision::kBf16, 1024, 2304, 1024, 7e-5});
  const ProfiledComputeModel model(p, h100());
  EXPECT_EQ(model.seconds(gemm(3000, 2304, 768), Precision::kBf16), 5e-5);
  EXPECT_EQ(model.seconds(gemm(1024, 2304, 1024), Precision::kBf16), 7e-5);
  EXPECT_DOUBLE_EQ(model.seconds(gemm(2048, 2048, 2048), Precision::kBf16), 2.0 * 2048 * 2048 * 2048 / (170.0 * kT));
}

TEST(ProfiledGemm, BackwardIsDataPlusWeightGradientAndGroupsMultiply) {
  const ProfiledComputeModel model(grid_profile(), h100());
  // Forward (1024, 4096, 1024): data gradient (1024, 1024, 4096) at 180 TFLOP/s,
  // weight gradient (1024, 4096, 1024) at 120 TFLOP/s; 3 GEMMs in the group.
  const double f = 2.0 * 1024 * 4096 * 1024;
  EXPECT_DOUBLE_EQ(model.seconds(gemm(1024, 4096, 1024, 3, true), Precision::kBf16),
                   3.0 * (f / (180.0 * kT) + f / (120.0 * kT)));
  EXPECT_DOUBLE_EQ(model.seconds(gemm(1024, 4096, 1024, 3), Precision::kBf16), 3.0 * f / (120.0 * kT));
  // Weight gradient (4096, 1024, 8192) leaves the grid along k.
  EXPECT_THAT(model.fallback_reason(gemm(8192, 1024, 4096, 1, true), Precision::kBf16),
              HasSubstr("(data gradient): outside the measured grid"));
  // One gradient alone (a column-parallel backward split around its reduction,
  // docs/model.md "Tensor-parallel backward"): its own GEMM only.
  KernelWork data = gemm(1024, 4096, 1024, 3, true);
  data.gradients = hw::Gradients::kData;
  EXPECT_DOUBLE_EQ(model.seconds(data, Precision::kBf16), 3.0 * f / (180.0 * kT));
  KernelWork weight = gemm(8192, 1024, 4096, 1, true);
  weight.gradients = hw::Gradients::kWeight;  // (4096, 1024, 8192): the miss names it
  EXPECT_THAT(model.fallback_reason(weight, Precision::kBf16), HasSubstr("(weight gradient): outside the measured grid"));
}

TEST(ProfiledGemm, BackwardLayoutRowsPriceTheGradientsWhereTheyCoverThem) {
  CalibrationProfile p = grid_profile();
  // Forward (1024, 4096, 1024): its data gradient dX = dY W measured as the row
  // (1024, 1024, 4096), its weight gradient dW = dY^T X as (4096, 1024, 1024).
  p.gemm_data_gradient.push_back({Precision::kBf16, 1024, 1024, 4096, 7e-5});
  p.gemm_weight_gradient.push_back({Precision::kBf16, 4096, 1024, 1024, 9e-5});
  const ProfiledComputeModel model(p, h100());
  const CostLookup both = model.lookup(gemm(1024, 4096, 1024, 3, true), Precision::kBf16);
  EXPECT_TRUE(both.measured());
  EXPECT_DOUBLE_EQ(both.seconds, 3.0 * (7e-5 + 9e-5));
  // Forward (4096, 4096, 1024): neither gradient is among the layout rows, so both are
  // forward GEMMs of the same products: (4096, 1024, 4096) at 100 + 40 + 80 TFLOP/s,
  // (1024, 4096, 4096) at 100 + 20 + 80.
  const double f = 2.0 * 4096 * 4096 * 1024;
  EXPECT_DOUBLE_EQ(model.seconds(gemm(4096, 4096, 1024, 1, true), Precision::kBf16),
                   f / (220.0 * kT) + f / (200.0 * kT));
  // The forward GEMM never takes a layout row.
  EXPECT_DOUBLE_EQ(model.seconds(gemm(1024, 1024, 4096), Precision::kBf16), 2.0 * 1024 * 1024 * 4096 / (180.0 * kT));
}

TEST(ProfiledKernels, BandwidthIsInterpolatedInLogBytes) {
  CalibrationProfile p;
  p.kernels.push_back({"layernorm_forward", KernelId::kLayernormForward, {}, 1e6, 0.0, 1e6 / 1e12});
  p.kernels.push_back({"layernorm_forward", KernelId::kLayernormForward, {}, 1e8, 0.0, 1e8 / 3e12});
  const ProfiledComputeModel model(p, h100());
  // 1e7 B is halfway between 1e6 and 1e8 in log: 2 TB/s.
  EXPECT_DOUBLE_EQ(model.seconds(memory(KernelId::kLayernormForward, 1e7), Precision::kBf16), 1e7 / 2e12);
  EXPECT_DOUBLE_EQ(model.seconds(memory(KernelId::kLayernormForward, 1e8), Precision::kBf16), 1e8 / 3e12);
  const RooflineComputeModel roofline(h100());
  for (const KernelWork& w : {memory(KernelId::kLayernormForward, 1e9), memory(KernelId::kLayernormBackward, 1e7),
                              memory(KernelId::kNone, 1e7)}) {
    const CostLookup c = model.lookup(w, Precision::kBf16);
    EXPECT_FALSE(c.measured());
    EXPECT_EQ(c.seconds, roofline.seconds(w, Precision::kBf16));
  }
  EXPECT_EQ(model.fallback_reason(memory(KernelId::kLayernormForward, 1e9), Precision::kBf16),
            "layernorm_forward at 1000000000 B: outside the measured 1000000..100000000 B");
  EXPECT_EQ(model.fallback_reason(memory(KernelId::kLayernormBackward, 1e7), Precision::kBf16),
            "layernorm_backward: not in the profile");
}

TEST(ProfiledKernels, WithoutTheKernelTheRooflineRunsAtTheLargestDeviceCopysBandwidth) {
  CalibrationProfile p;
  p.copies.push_back({CopyKind::kDeviceToDevice, 1e8, 1e8 / 2e12, 2000.0});
  p.copies.push_back({CopyKind::kDeviceToDevice, 1e9, 1e9 / 2.9e12, 2900.0});
  p.copies.push_back({CopyKind::kDeviceToDevice, 1e9, 1e9 / 3.1e12, 3100.0});  // the same size again: the mean, 3 TB/s
  p.copies.push_back({CopyKind::kHostToDevice, 4e9, 4e9 / 50e9, 50.0});
  const ProfiledComputeModel model(p, h100());
  // A residual add's backward (no kernel of ours), 1e7 B: 1e7 / 3e12 s.
  const CostLookup c = model.lookup(memory(KernelId::kNone, 1e7), Precision::kBf16);
  EXPECT_EQ(c.source, CostSource::kNoKernel);
  EXPECT_NEAR(c.seconds, 1e7 / 3e12, 1e-20);
  ASSERT_TRUE(model.fallback_efficiency(Precision::kBf16).memory_bandwidth.has_value());
  EXPECT_NEAR(*model.fallback_efficiency(Precision::kBf16).memory_bandwidth, 3e12, 1e-3);
}

TEST(ProfiledKernels, NoKernelIsFasterThanTheLaunchOverhead) {
  CalibrationProfile p;
  p.launch_overhead_s = 4e-6;
  p.copies.push_back({CopyKind::kDeviceToDevice, 1e9, 1e9 / 3e12, 3000.0});
  p.kernels.push_back({"gelu_forward", KernelId::kGeluForward, {}, 1e6, 0.0, 2e-6});
  p.kernels.push_back({"gelu_forward", KernelId::kGeluForward, {}, 1e8, 0.0, 1e8 / 2.5e12});
  const ProfiledComputeModel model(p, h100());
  // Measured at 2 us, launched no faster than every 4 us.
  const CostLookup small = model.lookup(memory(KernelId::kGeluForward, 1e6), Precision::kBf16);
  EXPECT_TRUE(small.measured());
  EXPECT_DOUBLE_EQ(small.seconds, 4e-6);
  // A fallback of 1e6 B at 3 TB/s (0.33 us) as well; large kernels keep their time.
  EXPECT_DOUBLE_EQ(model.seconds(memory(KernelId::kNone, 1e6), Precision::kBf16), 4e-6);
  EXPECT_DOUBLE_EQ(model.seconds(memory(KernelId::kGeluForward, 1e8), Precision::kBf16), 1e8 / 2.5e12);
  EXPECT_EQ(model.fallback_efficiency(Precision::kBf16).launch_overhead_s, 4e-6);
}

TEST(ProfiledKernels, RowsOfEqualSizeAverageTheirBandwidth) {
  CalibrationProfile p;
  p.kernels.push_back({"adamw", KernelId::kAdamw, {{"params", 1}}, 4e6, 0.0, 4e6 / 1e12});
  p.kernels.push_back({"adamw", KernelId::kAdamw, {{"params", 2}}, 4e6, 0.0, 4e6 / 3e12});
  const ProfiledComputeModel model(p, h100());
  EXPECT_DOUBLE_EQ(model.seconds(memory(KernelId::kAdamw, 4e6), Precision::kBf16), 4e6 / 2e12);
}

TEST(ProfiledAttention, LatentAttentionFindsNoRowsOfEqualWidthsAndTakesTheSpecsCurves) {
  // A profile's attention rows have values as wide as their queries: multi-head
  // latent attention (queries 192 wide, values 128) matches none of them, even at
  // head_dim 192, and falls back to the GPU spec's curves of both widths.
  CalibrationProfile p;
  const std::vector<std::pair<std::string, double>> d192{{"head_dim", 192}};
  p.kernels.push_back({"attention_forward", KernelId::kAttentionForward, d192, 1e6, 1e10, 1e10 / (100.0 * kT)});
  GpuSpec gpu = h100();
  gpu.attention_efficiency = {{192, {{1e10, 0.4}}, {{1e10, 0.3}}, AttentionKernel::kDefault, 128}};
  gpu.training_clock_ratio = 1.0;  // the curve as it stands
  const ProfiledComputeModel model(p, gpu);
  KernelWork latent = flash(KernelId::kAttentionForward, 1e10, 192);
  latent.value_head_dim = 128;
  EXPECT_EQ(model.lookup(latent, Precision::kBf16).source, CostSource::kNoHeadDim);
  EXPECT_DOUBLE_EQ(model.seconds(latent, Precision::kBf16), 1e10 / (989e12 * 0.4));
  EXPECT_THAT(model.fallback_reason(latent, Precision::kBf16),
              HasSubstr("no rows with head_dim 192 and values 128 wide (the profile measures equal widths)"));
  EXPECT_DOUBLE_EQ(model.seconds(flash(KernelId::kAttentionForward, 1e10, 192), Precision::kBf16),
                   1e10 / (100.0 * kT));  // square 192-wide heads: the profile's row
}

TEST(ProfiledAttention, FlashRateIsInterpolatedInLogFlopsPerHeadDim) {
  CalibrationProfile p;
  const std::vector<std::pair<std::string, double>> d64{{"head_dim", 64}};
  p.kernels.push_back({"attention_forward", KernelId::kAttentionForward, d64, 1e6, 1e9, 1e9 / (100.0 * kT)});
  p.kernels.push_back({"attention_forward", KernelId::kAttentionForward, d64, 1e6, 1e11, 1e11 / (300.0 * kT)});
  p.kernels.push_back({"attention_backward", KernelId::kAttentionBackward, d64, 1e6, 1e10, 1e10 / (250.0 * kT)});
  const ProfiledComputeModel model(p, h100());
  // 1e10 FLOPs: halfway in log between 1e9 and 1e11, 200 TFLOP/s.
  EXPECT_DOUBLE_EQ(model.seconds(flash(KernelId::kAttentionForward, 1e10, 64), Precision::kBf16), 1e10 / (200.0 * kT));
  EXPECT_DOUBLE_EQ(model.seconds(flash(KernelId::kAttentionBackward, 1e10, 64), Precision::kBf16),
                   1e10 / (250.0 * kT));
  EXPECT_EQ(model.lookup(flash(KernelId::kAttentionForward, 1e10, 128), Precision::kBf16).source,
            CostSource::kNoHeadDim);
  EXPECT_EQ(model.lookup(flash(KernelId::kAttentionForward, 1e12, 64), Precision::kBf16).source,
            CostSource::kOutsideKernelRange);
  EXPECT_EQ(model.lookup(flash(KernelId::kAttentionForward, 1e10, 64), Precision::kFp32).source,
            CostSource::kAttentionPrecision);
  // Unfused attention: batched per-head GEMMs, no kernel id.
  KernelWork unfused{KernelClass::kAttention, 1e10, 1e6, 96};
  const RooflineComputeModel roofline(h100());
  EXPECT_EQ(model.lookup(unfused, Precision::kBf16).source, CostSource::kUnfusedAttention);
  EXPECT_EQ(model.seconds(unfused, Precision::kBf16), roofline.seconds(unfused, Precision::kBf16));
}

TEST(ProfiledAttention, PytorchsAttentionTakesItsOwnRowsWhenMeasured) {
  CalibrationProfile p;
  const std::vector<std::pair<std::string, double>> d64{{"head_dim", 64}};
  p.kernels.push_back({"attention_forward", KernelId::kAttentionForward, d64, 1e6, 1e9, 1e9 / (100.0 * kT)});
  p.kernels.push_back({"attention_forward", KernelId::kAttentionForward, d64, 1e6, 1e11, 1e11 / (100.0 * kT)});
  p.kernels.push_back({"sdpa_forward", KernelId::kSdpaForward, d64, 1e6, 1e9, 1e9 / (200.0 * kT)});
  p.kernels.push_back({"sdpa_forward", KernelId::kSdpaForward, d64, 1e6, 1e11, 1e11 / (400.0 * kT)});
  const ProfiledComputeModel model(p, h100());
  // 1e10 FLOPs, halfway in log: 300 TFLOP/s from the sdpa rows, 100 from ours.
  const CostLookup sdpa = model.lookup(flash(KernelId::kSdpaForward, 1e10, 64), Precision::kBf16);
  EXPECT_EQ(sdpa.source, CostSource::kProfile);
  EXPECT_DOUBLE_EQ(sdpa.seconds, 1e10 / (300.0 * kT));
  EXPECT_DOUBLE_EQ(model.seconds(flash(KernelId::kAttentionForward, 1e10, 64), Precision::kBf16), 1e10 / (100.0 * kT));
}

TEST(ProfiledAttention, WithoutSdpaRowsOurFlashKernelStandsInAndSaysSo) {
  CalibrationProfile p;
  const std::vector<std::pair<std::string, double>> d64{{"head_dim", 64}};
  p.kernels.push_back({"attention_forward", KernelId::kAttentionForward, d64, 1e6, 1e9, 1e9 / (100.0 * kT)});
  p.kernels.push_back({"attention_forward", KernelId::kAttentionForward, d64, 1e6, 1e11, 1e11 / (300.0 * kT)});
  p.kernels.push_back({"attention_backward", KernelId::kAttentionBackward, d64, 1e6, 1e10, 1e10 / (250.0 * kT)});
  // sdpa rows at head_dim 128 only: a head_dim 64 query finds none of its own.
  p.kernels.push_back({"sdpa_forward", KernelId::kSdpaForward, {{"head_dim", 128}}, 1e6, 1e10, 1e10 / (500.0 * kT)});
  const ProfiledComputeModel model(p, h100());
  const CostLookup fwd = model.lookup(flash(KernelId::kSdpaForward, 1e10, 64), Precision::kBf16);
  EXPECT_EQ(fwd.source, CostSource::kStandIn);
  EXPECT_FALSE(fwd.measured());
  EXPECT_DOUBLE_EQ(fwd.seconds, 1e10 / (200.0 * kT));  // our forward's 200 TFLOP/s at 1e10
  EXPECT_THAT(model.fallback_reason(flash(KernelId::kSdpaForward, 1e10, 64), Precision::kBf16),
              HasSubstr("sdpa_forward: no rows with head_dim 64; priced at our attention_forward kernel's measured "
                        "rate"));
  const CostLookup bwd = model.lookup(flash(KernelId::kSdpaBackward, 1e10, 64), Precision::kBf16);
  EXPECT_EQ(bwd.source, CostSource::kStandIn);
  EXPECT_DOUBLE_EQ(bwd.seconds, 1e10 / (250.0 * kT));
  // Where ours does not cover it either, the roofline, for the sdpa kernel's own reason.
  const RooflineComputeModel roofline(h100());
  const KernelWork far = flash(KernelId::kSdpaForward, 1e13, 64);
  EXPECT_EQ(model.lookup(far, Precision::kBf16).source, CostSource::kNoHeadDim);
  EXPECT_DOUBLE_EQ(model.seconds(far, Precision::kBf16), roofline.seconds(far, Precision::kBf16));
  EXPECT_EQ(model.lookup(flash(KernelId::kSdpaForward, 1e13, 128), Precision::kBf16).source,
            CostSource::kOutsideKernelRange);
}

TEST(ProfiledKernels, PytorchsKernelsTakeTheirRowsElseOursStandsInElseTheFallback) {
  CalibrationProfile p;
  p.device.name = "NVIDIA H100 80GB HBM3";
  p.copies.push_back({CopyKind::kDeviceToDevice, 1e9, 1e9 / 3e12, 3000.0});
  p.kernels.push_back({"layernorm_forward", KernelId::kLayernormForward, {}, 1e6, 0.0, 1e6 / 1e12});
  p.kernels.push_back({"layernorm_forward", KernelId::kLayernormForward, {}, 1e8, 0.0, 1e8 / 1e12});
  p.kernels.push_back({"torch_gelu_forward", KernelId::kTorchGeluForward, {}, 1e6, 0.0, 1e6 / 2e12});
  p.kernels.push_back({"torch_gelu_forward", KernelId::kTorchGeluForward, {}, 1e8, 0.0, 1e8 / 2e12});
  p.kernels.push_back({"gelu_forward", KernelId::kGeluForward, {}, 1e6, 0.0, 1e6 / 1e12});
  p.kernels.push_back({"gelu_forward", KernelId::kGeluForward, {}, 1e9, 0.0, 1e9 / 1e12});
  const ProfiledComputeModel model(p, h100());
  // Its own rows: 2 TB/s, not our GELU's 1.
  const CostLookup gelu = model.lookup(memory(KernelId::kTorchGeluForward, 1e7), Precision::kBf16);
  EXPECT_EQ(gelu.source, CostSource::kProfile);
  EXPECT_DOUBLE_EQ(gelu.seconds, 1e7 / 2e12);
  // Beyond its rows (1e8 B) but inside ours (1e9 B): ours stands in.
  const CostLookup big = model.lookup(memory(KernelId::kTorchGeluForward, 5e8), Precision::kBf16);
  EXPECT_EQ(big.source, CostSource::kStandIn);
  EXPECT_DOUBLE_EQ(big.seconds, 5e8 / 1e12);
  EXPECT_THAT(model.fallback_reason(memory(KernelId::kTorchGeluForward, 5e8), Precision::kBf16),
              HasSubstr("torch_gelu_forward at 500000000 B: outside its measured range; priced at our gelu_forward "
                        "kernel's measured bandwidth"));
  // No rows of its own: our layer norm's 1 TB/s.
  const CostLookup norm = model.lookup(memory(KernelId::kTorchLayernormForward, 1e7), Precision::kBf16);
  EXPECT_EQ(norm.source, CostSource::kStandIn);
  EXPECT_DOUBLE_EQ(norm.seconds, 1e7 / 1e12);
  // A cast has no counterpart of ours: the roofline at the 3 TB/s device copy.
  const CostLookup cast = model.lookup(memory(KernelId::kTorchCast, 3e7), Precision::kBf16);
  EXPECT_EQ(cast.source, CostSource::kNoKernelRows);
  EXPECT_NEAR(cast.seconds, 3e7 / 3e12, 1e-20);
}

TEST(ProfileDevice, MatchesTheGpuModelLoosely) {
  EXPECT_TRUE(profile_matches_gpu("NVIDIA H200", "H200-SXM-141GB"));
  EXPECT_TRUE(profile_matches_gpu("NVIDIA H100 80GB HBM3", "H100-SXM5-80GB"));
  EXPECT_TRUE(profile_matches_gpu("NVIDIA A100-SXM4-80GB", "A100-SXM4-80GB"));
  EXPECT_TRUE(profile_matches_gpu("nvidia b200", "B200"));
  EXPECT_FALSE(profile_matches_gpu("NVIDIA H200", "H100-SXM5-80GB"));
  EXPECT_FALSE(profile_matches_gpu("NVIDIA H100 80GB HBM3", "A100-SXM4-80GB"));
  EXPECT_FALSE(profile_matches_gpu("NVIDIA H100", ""));
}

}  // namespace
}  // namespace trainsim::hw
