// A whole iteration priced by a calibration profile: which kernels the profile
// prices, counted by hand, and nothing else changes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <memory>

#include "execution/simulate.h"
#include "report/metrics.h"
#include "test_scenarios.h"

namespace trainsim {
namespace {

using ::testing::Contains;

// 4 layers, 64 sequences in micro-batches of 8 on one GPU: 8 micro-batches.
const std::string kModel = R"({"num_layers": 4, "hidden_size": 1024, "num_attention_heads": 8,
                                "seq_length": 512, "vocab_size": 32000})";

config::Scenario one_gpu(hw::CalibrationProfile profile) {
  config::Scenario s = testing::make_scenario(kModel, R"("micro_batch_size": 8)", R"("dp": 1)", 1,
                                                R"({"preset": "H100-SXM5-80GB", "platform": {"gpus_per_node": 1}})");
  profile.device.name = "NVIDIA H100 80GB HBM3";
  s.calibration = config::CalibrationSource{"h100.json", std::make_shared<const hw::CalibrationProfile>(profile), {}};
  return s;
}

hw::KernelRow row(hw::KernelId id, double bytes, double bandwidth) {
  return {std::string(hw::to_string(id)), id, {}, bytes, 0.0, bytes / bandwidth};
}

TEST(CalibratedIteration, AnEmptyProfileIsTheRoofline) {
  config::Scenario s = one_gpu({});
  const exec::SimulationOutput profiled = exec::simulate(s);
  s.calibration.reset();
  const exec::SimulationOutput roofline = exec::simulate(s);
  EXPECT_EQ(profiled.timeline.makespan, roofline.timeline.makespan);
  EXPECT_EQ(profiled.compute_model, "profile");
  ASSERT_TRUE(profiled.calibration.has_value());
  EXPECT_FALSE(roofline.calibration.has_value());
  // Per micro-batch: embedding, 10 ops in each of 4 layers, final norm, output
  // layer, loss; as many backward ops: 88. 8 micro-batches and the optimizer step.
  EXPECT_EQ(profiled.calibration->measured, 0);
  EXPECT_EQ(profiled.calibration->fallback, 8 * 88 + 1);
}

TEST(CalibratedIteration, CountsTheKernelsTheProfilePrices) {
  hw::CalibrationProfile p;
  // Norms move 2 t h e = 2 x 4096 x 1024 x 2 = 16 MiB; the optimizer a few GB.
  p.kernels = {row(hw::KernelId::kLayernormForward, 1e6, 3e12), row(hw::KernelId::kLayernormForward, 1e9, 3e12),
               row(hw::KernelId::kAdamw, 1e6, 3e12), row(hw::KernelId::kAdamw, 1e12, 3e12)};
  const config::Scenario s = one_gpu(p);
  const exec::SimulationOutput out = exec::simulate(s);
  ASSERT_TRUE(out.calibration.has_value());
  // Measured: 2 norms per layer + the final norm, forward only (no
  // layernorm_backward rows), in 8 micro-batches, and the optimizer step.
  EXPECT_EQ(out.calibration->measured, 8 * (2 * 4 + 1) + 1);
  EXPECT_EQ(out.calibration->fallback, 8 * 88 + 1 - out.calibration->measured);
  const auto& reasons = out.calibration->fallback_reasons;
  // 25 distinct reasons (11 forward ops, 14 backward), the first 20 in task order kept.
  EXPECT_EQ(reasons.size(), exec::CalibrationUsage::kMaxReasons);
  EXPECT_EQ(reasons.front(), "embedding: embedding_forward: not in the profile");
  EXPECT_THAT(reasons, Contains("qkv_proj: gemm bf16: the profile has no bf16 GEMMs"));
  EXPECT_THAT(reasons, Contains("post_attn_norm.backward: layernorm_backward: not in the profile"));
  EXPECT_THAT(reasons, Contains("attn_residual.backward: no measured kernel does this op's work"));
  for (std::size_t i = 0; i < reasons.size(); ++i)
    for (std::size_t j = i + 1; j < reasons.size(); ++j) EXPECT_NE(reasons[i], reasons[j]);

  // 3 TB/s instead of the roofline's 3350 GB/s x 0.866 = 2.9 TB/s: faster.
  config::Scenario roofline = s;
  roofline.calibration.reset();
  EXPECT_LT(out.timeline.makespan, exec::simulate(roofline).timeline.makespan);

  config::Scenario twice = s;
  twice.simulation.iterations = 2;
  EXPECT_EQ(exec::simulate(twice).calibration->measured, out.calibration->measured);

  // The counts are per iteration, and the metrics carry them with the profile's name.
  const report::Metrics m = report::compute_metrics(s, out);
  ASSERT_TRUE(m.calibration.has_value());
  EXPECT_EQ(m.calibration->profile, "h100.json");
  EXPECT_EQ(m.calibration->measured, out.calibration->measured);
}

}  // namespace
}  // namespace trainsim

namespace trainsim {
namespace {

TEST(CalibratedIteration, TheMeasuredContextCountsAgainstTheCapacity) {
  hw::CalibrationProfile p;
  const config::Scenario none = one_gpu(p);
  const report::Metrics without = report::compute_metrics(none, exec::simulate(none));
  EXPECT_EQ(without.memory.context_bytes, 0.0);
  ASSERT_TRUE(without.memory.fits);
  // A context that leaves less than the peak free: the same run no longer fits,
  // and the peak itself is unchanged.
  const double free_bytes = without.memory.capacity_bytes_per_gpu - without.memory.peak_bytes_per_gpu;
  p.device.context_bytes = free_bytes + 1.0;
  const config::Scenario big = one_gpu(p);
  const report::Metrics with = report::compute_metrics(big, exec::simulate(big));
  EXPECT_EQ(with.memory.context_bytes, free_bytes + 1.0);
  EXPECT_EQ(with.memory.peak_bytes_per_gpu, without.memory.peak_bytes_per_gpu);
  EXPECT_FALSE(with.memory.fits);
  EXPECT_THAT(with.memory.reason, ::testing::HasSubstr("of CUDA context (measured)"));
  p.device.context_bytes = free_bytes;  // exactly full still fits
  const config::Scenario exact = one_gpu(p);
  EXPECT_TRUE(report::compute_metrics(exact, exec::simulate(exact)).memory.fits);
}

}  // namespace
}  // namespace trainsim
