// The plan's picture (view/plan_plot.h): options read from a plan and painted at
// hand-derived places. Geometry: the plot area starts at x = 90, y = 44 and ends
// 40 px from the right and 56 px from the bottom; at 1000x600 its pixels are
// x 90..959 and y 44..543. The axes run from 0 to a round value above the
// largest figure: 50 days (35 days x 1.05 -> 5 x 10) and $200k (150k x 1.05 ->
// 2 x 100k), so x = 90 + 869 days / 50 and y = 543 - 499 usd / 200k.
#include <gtest/gtest.h>

#include "model/plan_points.h"
#include "model/timeline_reader.h"
#include "view/plan_plot.h"

namespace trainsim::gui {
namespace {

const char* kPlan = R"({"plan": "test", "objective": "time_to_train", "options": [
  {"cluster": "A", "time_to_train_s": {"p50": 864000, "p90": 864000}, "cost_usd": 100000, "owned_cost_usd": null,
   "pareto": true},
  {"cluster": "B", "time_to_train_s": {"p50": 1728000, "p90": 1728000}, "cost_usd": null,
   "owned_cost_usd": {"capex": 40000, "energy": 10000, "total": 50000}, "pareto": true},
  {"cluster": "C", "time_to_train_s": {"p50": 3024000, "p90": 3024000}, "cost_usd": 150000, "pareto": false},
  {"cluster": "D", "best": null, "cost_usd": null}]})";

TEST(PlanPlot, ReadsOwnedCostsWhereGivenAndCountsOptionsWithout) {
  ASSERT_TRUE(is_plan(kPlan));
  EXPECT_FALSE(is_plan(R"({"format": "trainsim-corpus-report"})"));
  const PlanPlotData d = parse_plan_text(kPlan, "plan.json");
  ASSERT_EQ(d.points.size(), 3u);
  EXPECT_EQ(d.without_cost, 1);
  EXPECT_DOUBLE_EQ(d.points[1].cost_usd, 50000.0);  // B's owned total, not its null cloud cost
  EXPECT_TRUE(d.points[1].owned);
  EXPECT_FALSE(d.points[2].pareto);
  EXPECT_THROW((void)parse_plan_text(R"({"plan": "x", "options": [{"time_to_train_s": {"p50": -1}, "cost_usd": 1}]})",
                                     "x.json"),
               ReadError);
}

TEST(PlanPlot, PaintsEachOptionWhereItsTimeAndCostPutIt) {
  const QImage image = render_plan_plot(parse_plan_text(kPlan, "plan.json"), QSize(1000, 600));
  ASSERT_EQ(image.size(), QSize(1000, 600));
  // A (10 days, $100k) on the front, filled: centred at (263.8, 293.5).
  EXPECT_NE(image.pixelColor(264, 293), QColor(Qt::white));
  // B (20 days, $50k owned) on the front: (437.6, 418.3).
  EXPECT_NE(image.pixelColor(438, 418), QColor(Qt::white));
  // C (35 days, $150k) off it, hollow: centre (698.3, 168.8) white, its ring 5 px out coloured.
  EXPECT_EQ(image.pixelColor(698, 169), QColor(Qt::white));
  EXPECT_NE(image.pixelColor(703, 169), QColor(Qt::white));
}

}  // namespace
}  // namespace trainsim::gui
