// The prediction interval (report/prediction_interval.h; docs/model.md,
// "Prediction interval") against hand-derived ranks and the shipped record.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <stdexcept>

#include "report/prediction_interval.h"
#include "scenario/errors.h"
#include "scenario/model_error_reader.h"

namespace trainsim {
namespace {

TEST(PredictionInterval, SplitConformalRanksOfTheSortedRatios) {
  // n = 19: ranks floor(0.1 x 20) = 2 and ceil(0.9 x 20) = 18; median the 10th.
  std::vector<double> ratios;
  for (int i = 19; i >= 1; --i) ratios.push_back(0.1 * i);
  const config::ModelErrorRecord r = report::model_error_from_ratios(ratios);
  EXPECT_EQ(r.cases, 19);
  EXPECT_DOUBLE_EQ(r.ratio_p10, 0.1 * 2);
  EXPECT_DOUBLE_EQ(r.ratio_p50, 0.1 * 10);
  EXPECT_DOUBLE_EQ(r.ratio_p90, 0.1 * 18);
  // n = 4: ranks floor(0.5) = 0 -> 1 and ceil(4.5) = 5 -> 4 (clamped); median of the middle two.
  const config::ModelErrorRecord small = report::model_error_from_ratios({1.3, 0.9, 1.1, 2.0});
  EXPECT_DOUBLE_EQ(small.ratio_p10, 0.9);
  EXPECT_DOUBLE_EQ(small.ratio_p50, 1.2);
  EXPECT_DOUBLE_EQ(small.ratio_p90, 2.0);
  EXPECT_THROW((void)report::model_error_from_ratios({}), std::invalid_argument);
  EXPECT_THROW((void)report::model_error_from_ratios({1.0, 0.0}), std::invalid_argument);
}

TEST(PredictionInterval, IsTheIterationTimeTimesTheRatios) {
  config::ModelErrorRecord r;
  r.cases = 91;
  r.ratio_p10 = 0.95;
  r.ratio_p50 = 1.2;
  r.ratio_p90 = 1.5;
  const report::PredictionInterval p = report::prediction_interval(2.0, r);
  EXPECT_DOUBLE_EQ(p.p10, 1.9);
  EXPECT_DOUBLE_EQ(p.p50, 2.4);
  EXPECT_DOUBLE_EQ(p.p90, 3.0);
  EXPECT_EQ(p.cases, 91);
}

TEST(PredictionInterval, TheShippedRecordIsTheFileInScenarios) {
  std::ifstream in(std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/accuracy/model_error.json");
  std::stringstream text;
  text << in.rdbuf();
  const config::ModelErrorRecord file =
      scenario::parse_model_error(nlohmann::json::parse(text.str()), "scenarios/accuracy/model_error.json");
  const config::ModelErrorRecord& shipped = scenario::shipped_model_error();
  EXPECT_EQ(shipped.cases, file.cases);
  EXPECT_EQ(shipped.ratio_p10, file.ratio_p10);
  EXPECT_EQ(shipped.ratio_p90, file.ratio_p90);
  EXPECT_GT(shipped.cases, 0);
  EXPECT_LE(shipped.ratio_p10, shipped.ratio_p50);
  EXPECT_LE(shipped.ratio_p50, shipped.ratio_p90);
}

TEST(PredictionInterval, ABadRecordNamesTheField) {
  const nlohmann::json j = {{"format", "trainsim-model-error"}, {"version", 1},    {"cases", 10},
                            {"ratio_p10", 1.2},                 {"ratio_p50", 1.1}, {"ratio_p90", 1.5}};
  try {
    (void)scenario::parse_model_error(j, "model_error.json");
    FAIL() << "a P50 below the P10 was accepted";
  } catch (const scenario::ScenarioError& e) {
    EXPECT_NE(std::string(e.what()).find("model_error.json"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("ratio_p50"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace trainsim
