// Item models without a window, checked by QAbstractItemModelTester; the
// comparison and the filter by hand.
#include <gtest/gtest.h>

#include <QAbstractItemModelTester>

#include "gui_fixtures.h"
#include "model/categories.h"
#include "model/lane_model.h"
#include "model/lane_layout.h"
#include "model/span_filter.h"
#include "model/timeline_reader.h"

namespace trainsim::gui {
namespace {

std::shared_ptr<const TimelineData> fixture() {
  return std::make_shared<const TimelineData>(parse_timeline_text(testing::two_node_timeline(), "fixture"));
}

TEST(LaneModel, PassesTheModelTesterAndHasOneRowPerLane) {
  LaneModel model;
  QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Fatal);
  model.set_timeline(fixture());
  ASSERT_EQ(model.rowCount(), 3);
  const QModelIndex dp = model.index(1, 0);
  EXPECT_EQ(model.data(dp).toString(), QStringLiteral("GPU 0 / dp_comm"));
  EXPECT_EQ(model.data(dp, LaneModel::kStreamRole).toString(), QStringLiteral("dp_comm"));
  EXPECT_EQ(model.data(model.index(2, 0), LaneModel::kNodeRole).toInt(), 1);
  EXPECT_EQ(model.data(model.index(0, 0), LaneModel::kSpanCountRole).toULongLong(), 2u);
  EXPECT_DOUBLE_EQ(model.data(model.index(2, 0), LaneModel::kBusyTimeRole).toDouble(), 1.0);  // 0.5 + 0.5
  model.set_timeline(nullptr);
  EXPECT_EQ(model.rowCount(), 0);
}

TEST(CategoryDiffModel, PassesTheModelTesterWithHandDerivedDifferences) {
  const auto a = fixture();
  // B: rank 0 forward takes 1.5 s instead of 1 s, and no all-reduce.
  auto b_data = parse_timeline_text(testing::two_node_timeline(), "b");
  b_data.lanes[0].spans[0].end = 1.5;
  b_data.lanes[0].spans[1].start = 1.5;
  b_data.lanes[0].spans[1].end = 2.5;
  b_data.lanes[1].spans.clear();
  finalize(b_data);
  const auto rows = compare_categories(category_totals(*a), category_totals(b_data));
  // Rank 0: forward 1 vs 1.5, backward 1 vs 1, all_reduce 0.5 vs 0.
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].category, Category::kForward);
  EXPECT_DOUBLE_EQ(rows[0].diff_s(), 0.5);
  EXPECT_DOUBLE_EQ(rows[0].relative(), 0.5);
  EXPECT_EQ(rows[2].category, Category::kAllReduce);
  EXPECT_DOUBLE_EQ(rows[2].diff_s(), -0.5);

  CategoryDiffModel model;
  QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Fatal);
  model.set_rows(rows, QStringLiteral("A"), QStringLiteral("B"));
  ASSERT_EQ(model.rowCount(), 3);
  EXPECT_EQ(model.columnCount(), CategoryDiffModel::kColumns);
  EXPECT_EQ(model.data(model.index(0, CategoryDiffModel::kCategory)).toString(), QStringLiteral("forward"));
  EXPECT_EQ(model.data(model.index(0, CategoryDiffModel::kDiff)).toString(), QStringLiteral("+500 ms"));
  EXPECT_EQ(model.data(model.index(0, CategoryDiffModel::kRelative)).toString(), QStringLiteral("+50.0%"));
  EXPECT_DOUBLE_EQ(model.data(model.index(2, CategoryDiffModel::kB), CategoryDiffModel::kSecondsRole).toDouble(), 0.0);
}

TEST(LaneLayout, NodesCollapse) {
  const auto t = fixture();
  // Header 18 + 2 lanes x 16 + header 18 + 1 lane x 16 + 1 counter x 24 = 108.
  const LaneLayout open = layout_lanes(*t, {});
  EXPECT_EQ(open.rows.size(), 6u);
  EXPECT_DOUBLE_EQ(open.total_height, 108.0);
  ASSERT_NE(open.row_at(20.0), nullptr);
  EXPECT_EQ(open.row_at(20.0)->kind, LaneRow::Kind::kLane);  // rank 0 compute, y 18..34
  EXPECT_EQ(open.row_at(20.0)->index, 0u);
  const LaneLayout folded = layout_lanes(*t, {0});
  EXPECT_EQ(folded.rows.size(), 4u);
  EXPECT_DOUBLE_EQ(folded.total_height, 76.0);  // 108 - 2 x 16
}

TEST(SpanFilter, MatchesNameAndCategory) {
  const auto t = fixture();
  SpanFilter f;
  EXPECT_FALSE(f.active());
  f.text = "BWD";  // case-insensitive
  EXPECT_TRUE(f.matches(*t, t->lanes[0].spans[1]));
  EXPECT_FALSE(f.matches(*t, t->lanes[0].spans[0]));
  const auto first = find_next(*t, f, std::nullopt);
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(*first, (SpanRef{0, 1}));
  const auto second = find_next(*t, f, first);
  EXPECT_EQ(*second, (SpanRef{2, 1}));  // "bwd1"
  EXPECT_EQ(*find_next(*t, f, second), (SpanRef{0, 1}));  // wraps
  f.text.clear();
  f.categories.reset();
  f.categories.set(static_cast<std::size_t>(Category::kAllReduce));
  EXPECT_EQ(*find_next(*t, f, std::nullopt), (SpanRef{1, 0}));
}

}  // namespace
}  // namespace trainsim::gui

namespace trainsim::gui {
namespace {

TEST(Categories, RunTimelineCategoriesHaveTheirOwnColours) {
  // docs/results.md, "Run timeline": train, maintenance and degraded spans.
  EXPECT_EQ(category_from_name("train"), Category::kTrain);
  EXPECT_EQ(category_from_name("maintenance"), Category::kMaintenance);
  EXPECT_EQ(category_from_name("degraded"), Category::kDegraded);
  EXPECT_EQ(category_name(Category::kTrain), "train");
  EXPECT_EQ(category_from_name("no such category"), Category::kOther);
}

}  // namespace
}  // namespace trainsim::gui
