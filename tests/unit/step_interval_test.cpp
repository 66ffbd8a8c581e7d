// The iteration time as a distribution (docs/model.md, "Step-time variability"):
// quantiles of the normal and of the largest of n draws, and T_q = T + V s M_R(q).
#include <cmath>
#include <gtest/gtest.h>

#include "core/normal_quantile.h"
#include "report/step_interval.h"
#include "test_scenarios.h"

namespace trainsim {
namespace {

TEST(NormalQuantile, MatchesPublishedValues) {
  EXPECT_NEAR(core::normal_quantile(0.975), 1.9599639845400536, 1e-15);  // the 95% two-sided z
  EXPECT_NEAR(core::normal_quantile(0.1), -1.2815515655446008, 1e-15);
  EXPECT_DOUBLE_EQ(core::normal_quantile(0.5), 0.0);
  EXPECT_NEAR(core::normal_quantile(1e-10), -6.361340902404056, 1e-12);  // AS 241's far tail
  EXPECT_THROW((void)core::normal_quantile(0.0), std::invalid_argument);
  EXPECT_THROW((void)core::normal_quantile(1.0), std::invalid_argument);
}

TEST(NormalQuantile, LargestOfNDraws) {
  // One draw: the normal itself. Eight: the median of the largest is
  // Phi^-1(0.5^(1/8)) = Phi^-1(0.917004) = 1.385198.
  EXPECT_NEAR(core::max_normal_quantile(0.1, 1.0), -1.2815515655446008, 1e-15);
  EXPECT_NEAR(core::max_normal_quantile(0.5, 8.0), 1.3851980605543786, 1e-13);
  // 16384 draws: 1 - 0.9^(1/16384) = 6.43e-6 in the upper tail, kept to full precision.
  EXPECT_NEAR(core::max_normal_quantile(0.9, 16384.0), 4.362450830653149, 1e-11);
}

TEST(StepInterval, StretchesComputeBubbleAndOptimizerByTheSlowestGpu) {
  // T = 1 s: compute 0.6, optimizer 0.1, bubble 0.1 (V = 0.8), exposed
  // communication 0.2. sigma_g = 2%, c = 5% over K = 100 kernels:
  // s = sqrt(0.02^2 + 0.05^2 / 100) = 0.0206155; R = 8 GPUs.
  report::Breakdown b;
  b.compute = 0.6;
  b.optimizer = 0.1;
  b.pipeline_bubble = 0.1;
  b.exposed_communication = 0.2;
  const auto i = report::step_interval(1.0, b, 100.0, 8, 0.02, 0.05);
  ASSERT_TRUE(i.has_value());
  EXPECT_NEAR(i->p10, 1.0111184800748692, 1e-14);  // 1 + 0.8 s x 0.674157
  EXPECT_NEAR(i->p50, 1.0228452716642658, 1e-14);  // 1 + 0.8 s x 1.385198
  EXPECT_NEAR(i->p90, 1.036674493384868, 1e-14);   // 1 + 0.8 s x 2.223718
  EXPECT_DOUBLE_EQ(i->scaled_s, 0.8);
  // No spread at all: every quantile is the simulated step.
  const auto none = report::step_interval(1.0, b, 100.0, 8, 0.0, 0.0);
  EXPECT_DOUBLE_EQ(none->p10, 1.0);
  EXPECT_DOUBLE_EQ(none->p90, 1.0);
}

TEST(StepInterval, PresetsCarryTheMeasuredKernelCvAndClustersTheirSpread) {
  const auto s = testing::make_scenario("\"gpt2-124m\"");
  EXPECT_DOUBLE_EQ(s.cluster.gpu.kernel_time_cv, 0.014);  // H100, measured
  EXPECT_DOUBLE_EQ(s.cluster.gpu_speed_spread, 0.0);      // default: GPUs alike
}

}  // namespace
}  // namespace trainsim
