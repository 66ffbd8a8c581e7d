#pragma once
// Two runs side by side (A vs B, or predicted vs measured): busy time per
// category on one rank's lanes, and the differences.
#include <array>
#include <vector>

#include "model/timeline_data.h"

namespace trainsim::gui {

struct CategoryTotals {
  std::array<double, kNumCategories> busy_s{};  // sum of span durations per category
  double makespan_s = 0.0;                     // t_end - t_begin of the whole timeline
  int rank = 0;
};

// Totals over the lanes of `rank`; rank -1: the lowest rank that has lanes.
CategoryTotals category_totals(const TimelineData& t, int rank = -1);

struct CategoryDifference {
  Category category = Category::kOther;
  double a_s = 0.0;
  double b_s = 0.0;
  double diff_s() const { return b_s - a_s; }
  // (B - A) / A; 0 when A is 0.
  double relative() const { return a_s != 0.0 ? (b_s - a_s) / a_s : 0.0; }
};

// One row per category that either run has, in category order.
std::vector<CategoryDifference> compare_categories(const CategoryTotals& a, const CategoryTotals& b);

}  // namespace trainsim::gui
