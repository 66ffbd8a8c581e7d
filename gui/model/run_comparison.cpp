#include "model/run_comparison.h"

#include <climits>

namespace trainsim::gui {

CategoryTotals category_totals(const TimelineData& t, int rank) {
  CategoryTotals c;
  if (rank < 0) {
    rank = INT_MAX;
    for (const Lane& l : t.lanes)
      if (l.rank < rank) rank = l.rank;
    if (rank == INT_MAX) rank = 0;
  }
  c.rank = rank;
  c.makespan_s = t.t_end - t.t_begin;
  for (const Lane& l : t.lanes) {
    if (l.rank != rank) continue;
    for (const Span& s : l.spans) c.busy_s[static_cast<std::size_t>(s.category)] += s.end - s.start;
  }
  return c;
}

std::vector<CategoryDifference> compare_categories(const CategoryTotals& a, const CategoryTotals& b) {
  std::vector<CategoryDifference> rows;
  for (const Category cat : all_categories()) {
    const auto i = static_cast<std::size_t>(cat);
    if (a.busy_s[i] == 0.0 && b.busy_s[i] == 0.0) continue;
    rows.push_back({cat, a.busy_s[i], b.busy_s[i]});
  }
  return rows;
}

}  // namespace trainsim::gui
