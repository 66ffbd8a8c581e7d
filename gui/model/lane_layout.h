#pragma once
// Vertical layout of the timeline: per node a header row, then (unless the node
// is collapsed) one row per lane (GPU x stream), then the counter rows.
#include <set>
#include <vector>

#include "model/timeline_data.h"

namespace trainsim::gui {

struct RowHeights {
  double node_header = 18.0;
  double lane = 16.0;
  double counter = 24.0;
};

struct LaneRow {
  enum class Kind { kNodeHeader, kLane, kCounter };
  Kind kind = Kind::kLane;
  int node = 0;
  std::size_t index = 0;  // lane or counter index (unused for headers)
  double y = 0.0;         // top, relative to the first row
  double height = 0.0;
};

struct LaneLayout {
  std::vector<LaneRow> rows;
  double total_height = 0.0;

  // The row at y (relative to the first row), or nullptr.
  const LaneRow* row_at(double y) const;
};

LaneLayout layout_lanes(const TimelineData& t, const std::set<int>& collapsed_nodes, const RowHeights& h = {});

}  // namespace trainsim::gui
