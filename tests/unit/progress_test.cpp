// Progress of a simulation (core/progress.h, exec::SimulateOptions::progress):
// the meter's report points, and simulate() calling back with non-decreasing
// fractions that end at 1 while its results stay the same.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "core/progress.h"
#include "execution/simulate.h"
#include "test_scenarios.h"

namespace trainsim {
namespace {

std::vector<double> count(std::uint64_t units, double begin, double end) {
  std::vector<double> seen;
  const core::ProgressCallback cb = [&](double f) { seen.push_back(f); };
  core::Progress p(&cb, begin, end, units);
  for (std::uint64_t i = 0; i < units; ++i) p.advance();
  return seen;
}

TEST(Progress, ReportsEachTwoHundredthOfThePhase) {
  // 1000 units: a report every 1000 / 200 = 5 units, 200 reports, k/200 of the way.
  const std::vector<double> seen = count(1000, 0.0, 1.0);
  ASSERT_EQ(seen.size(), 200u);
  EXPECT_DOUBLE_EQ(seen.front(), 0.005);
  EXPECT_DOUBLE_EQ(seen[99], 0.5);
  EXPECT_DOUBLE_EQ(seen.back(), 1.0);
}

TEST(Progress, TheLastUnitAlwaysReportsTheEndOfThePhase) {
  // 1003 units: a report every ceil(1003 / 200) = 6 units up to 1002 (167 reports),
  // then 1003 itself.
  const std::vector<double> seen = count(1003, 0.25, 0.75);
  ASSERT_EQ(seen.size(), 168u);
  EXPECT_DOUBLE_EQ(seen[166], 0.25 + 0.5 * 1002.0 / 1003.0);
  EXPECT_DOUBLE_EQ(seen.back(), 0.75);
  // Fewer units than reports: one report per unit.
  EXPECT_EQ(count(7, 0.0, 1.0).size(), 7u);
}

TEST(Progress, WithoutACallbackNothingIsCalled) {
  const core::ProgressCallback empty;
  core::Progress p(&empty, 0.0, 1.0, 10);
  for (int i = 0; i < 10; ++i) p.advance();  // would call an empty std::function and throw
  core::Progress none;
  none.advance();
  SUCCEED();
}

const std::string kModel = R"({"num_layers": 2, "hidden_size": 1024, "num_attention_heads": 8,
                                "seq_length": 512, "vocab_size": 32000})";

void expect_progress_and_same_results(const config::Scenario& s, std::size_t runs) {
  std::vector<double> seen;
  exec::SimulateOptions options;
  options.progress = [&](double f) { seen.push_back(f); };
  const exec::SimulationOutput with = exec::simulate(s, options);
  const exec::SimulationOutput without = exec::simulate(s);
  ASSERT_FALSE(seen.empty());
  for (std::size_t i = 1; i < seen.size(); ++i) EXPECT_GE(seen[i], seen[i - 1]) << "call " << i;
  EXPECT_GT(seen.front(), 0.0);
  EXPECT_DOUBLE_EQ(seen.back(), 1.0);
  EXPECT_LE(seen.size(), runs * (core::Progress::kReports + 1));
  // The callback observes; the timeline is the same span for span.
  ASSERT_EQ(with.timeline.spans.size(), without.timeline.spans.size());
  EXPECT_EQ(with.timeline.makespan, without.timeline.makespan);
  for (std::size_t i = 0; i < with.timeline.spans.size(); ++i) {
    EXPECT_EQ(with.timeline.spans[i].task, without.timeline.spans[i].task);
    EXPECT_EQ(with.timeline.spans[i].start, without.timeline.spans[i].start);
    EXPECT_EQ(with.timeline.spans[i].end, without.timeline.spans[i].end);
  }
}

TEST(SimulateProgress, FractionsRiseToOneAndResultsDoNotChange) {
  const auto s = testing::make_scenario(kModel, "", R"("dp": 8)");
  expect_progress_and_same_results(s, 1);
}

TEST(SimulateProgress, LocalSgdsThreeRunsShareTheBar) {
  const auto s = testing::make_scenario(kModel, "", R"("mode": "local_sgd", "sync_period": 8)");
  std::vector<double> seen;
  exec::SimulateOptions options;
  options.progress = [&](double f) { seen.push_back(f); };
  (void)exec::simulate(s, options);
  // Each run ends its third exactly: 1/3, 2/3 and 1 are among the fractions.
  EXPECT_NE(std::find(seen.begin(), seen.end(), 1.0 / 3.0), seen.end());
  EXPECT_NE(std::find(seen.begin(), seen.end(), 2.0 / 3.0), seen.end());
  expect_progress_and_same_results(s, 3);
}

}  // namespace
}  // namespace trainsim
