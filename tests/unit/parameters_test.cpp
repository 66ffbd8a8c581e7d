// Parameter counts of every model preset against the published counts.
#include <gtest/gtest.h>

#include "scenario/presets.h"
#include "test_scenarios.h"
#include "workload/parameters.h"

namespace trainsim {
namespace {

double count(const std::string& preset) {
  return workload::count_parameters(testing::make_scenario("\"" + preset + "\"").model).total;
}

// Exact counts of the released checkpoints (sum of tensor sizes), as cited in
// scenarios/models/*.json.
TEST(Parameters, Gpt2SmallMatchesReleasedCheckpointExactly) {
  // wte 50257*768 + wpe 1024*768 + 12 * 7,087,872 per block + ln_f 2*768
  EXPECT_EQ(count("gpt2-124m"), 124'439'808.0);
}

TEST(Parameters, Gpt2MediumMatchesReleasedCheckpointExactly) { EXPECT_EQ(count("gpt2-350m"), 354'823'168.0); }

TEST(Parameters, LlamaThreeMatchesReleasedCheckpointsExactly) {
  // 8B: 32 * (41,943,040 attention + 176,160,768 SwiGLU + 8,192 norms) + 2 * 128256*4096 + 4096
  EXPECT_EQ(count("llama3-8b"), 8'030'261'248.0);
  EXPECT_EQ(count("llama3-70b"), 70'553'706'496.0);
  EXPECT_EQ(count("llama3-405b"), 405'853'388'800.0);
}

TEST(Parameters, MixtralCountsEveryExpertAndTheRouter) {
  EXPECT_EQ(count("mixtral-8x7b"), 46'702'792'704.0);
  // Active per token: 2 of 8 experts. 32 layers x 6 unused experts x 3 x 4096 x 14336 fewer.
  const auto c = workload::count_parameters(testing::make_scenario("\"mixtral-8x7b\"").model);
  EXPECT_EQ(c.active_per_token, 46'702'792'704.0 - 32.0 * 6.0 * 3.0 * 4096.0 * 14336.0);
}

TEST(Parameters, Gpt3IsWithinRoundingOfThePublished175B) {
  // Brown et al. 2020 Table 2.1 rounds to 175.0B; the architecture gives 174.6B:
  // 12 l h^2 + 13 l h + V h + s h + 2 h with l=96, h=12288, V=50257, s=2048.
  const double l = 96, h = 12288, v = 50257, s = 2048;
  const double exact = 12 * l * h * h + 13 * l * h + v * h + s * h + 2 * h;
  EXPECT_EQ(count("gpt3-175b"), exact);
  EXPECT_NEAR(count("gpt3-175b") / 175.0e9, 1.0, 0.005);
}

TEST(Parameters, EveryPresetMatchesItsPublishedCount) {
  for (const std::string& name : scenario::preset_names(scenario::PresetKind::kModel)) {
    SCOPED_TRACE(name);
    const auto model = testing::make_scenario("\"" + name + "\"").model;
    ASSERT_TRUE(model.published_parameters.has_value());
    EXPECT_NEAR(workload::count_parameters(model).total / *model.published_parameters, 1.0, 0.005);
  }
}

}  // namespace
}  // namespace trainsim
