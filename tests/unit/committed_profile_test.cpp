// The committed H200 profile (scenarios/calibration/h200-sxm-141gb.json) read
// through the real reader and priced by the real model: a GEMM shape the profile
// measured costs exactly its measured median, and the PyTorch-reference scenario's
// GEMMs are all exact hits (they were measured with --shapes for it).
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "hardware/profiled_compute_model.h"
#include "scenario/calibration_reader.h"
#include "scenario/reader.h"

namespace {

using namespace trainsim;

const std::string kRoot = TRAINSIM_SOURCE_DIR;

TEST(CommittedProfile, IsCompleteAndFromAnH200) {
  const scenario::ProfileReading r = scenario::read_calibration_file(kRoot + "/scenarios/calibration/h200-sxm-141gb.json");
  EXPECT_TRUE(r.warnings.empty());
  EXPECT_TRUE(r.profile.complete);
  EXPECT_NE(r.profile.device.name.find("H200"), std::string::npos);
}

TEST(CommittedProfile, MeasuredShapeCostsItsMeasuredMedian) {
  const config::Scenario s = scenario::read_scenario_file(
      kRoot + "/scenarios/validation/gpt2-124m-1xh200.json",
      scenario::ReadOptions{.calibration = kRoot + "/scenarios/calibration/h200-sxm-141gb.json"});
  ASSERT_TRUE(s.calibration.has_value());
  const scenario::ProfileReading r = scenario::read_calibration_file(kRoot + "/scenarios/calibration/h200-sxm-141gb.json");
  const hw::ProfiledComputeModel model(r.profile, s.cluster.gpu);
  // GPT-2 small's QKV projection on 8 x 1024 tokens: C[8192 x 2304] = A[8192 x 768] W^T.
  double measured = 0.0;
  for (const hw::GemmRow& row : r.profile.gemm)
    if (row.dtype == hw::Precision::kBf16 && row.m == 8192 && row.n == 2304 && row.k == 768) measured = row.seconds;
  ASSERT_GT(measured, 0.0);
  hw::KernelWork qkv{hw::KernelClass::kMatmul, 2.0 * 8192 * 2304 * 768, 0.0, 1};
  qkv.m = 8192;
  qkv.n = 2304;
  qkv.k = 768;
  const hw::CostLookup c = model.lookup(qkv, hw::Precision::kBf16);
  EXPECT_TRUE(c.measured());
  EXPECT_DOUBLE_EQ(c.seconds, measured);
}

// The validation scenario with async checkpoints, `host_copy` in its failures
// section when given, read with the committed profile.
config::Scenario with_async_checkpoints(const char* host_copy) {
  std::ifstream in(kRoot + "/scenarios/validation/gpt2-124m-1xh200.json");
  std::stringstream text;
  text << in.rdbuf();
  nlohmann::json doc = nlohmann::json::parse(text.str());
  doc["failures"] = {{"checkpoint_mode", "async"}};
  if (host_copy != nullptr) doc["failures"]["host_copy_bandwidth"] = host_copy;
  return scenario::parse_scenario_text(
      doc.dump(), "gpt2-124m-async.json",
      scenario::ReadOptions{.calibration = kRoot + "/scenarios/calibration/h200-sxm-141gb.json"});
}

TEST(CommittedProfile, AsyncCheckpointsCopyToHostAtTheMeasuredBandwidth) {
  // The profile's largest device-to-host copy: 1 GiB in 19.417408 ms, 55.3 GB/s.
  const config::Scenario measured = with_async_checkpoints(nullptr);
  ASSERT_TRUE(measured.failures.has_value());
  EXPECT_DOUBLE_EQ(measured.failures->host_copy_bandwidth, 1073741824.0 / 0.019417407989501954);
  EXPECT_EQ(measured.failures->host_copy_source, faults::FailureConfig::Source::kProfile);
  // The scenario's own figure wins.
  const config::Scenario given = with_async_checkpoints("20GB/s");
  EXPECT_DOUBLE_EQ(given.failures->host_copy_bandwidth, 20e9);
  EXPECT_EQ(given.failures->host_copy_source, faults::FailureConfig::Source::kScenario);
}

}  // namespace
