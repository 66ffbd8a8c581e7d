#include "model/lane_layout.h"

#include <algorithm>

namespace trainsim::gui {

const LaneRow* LaneLayout::row_at(double y) const {
  const auto it = std::upper_bound(rows.begin(), rows.end(), y, [](double v, const LaneRow& r) { return v < r.y; });
  if (it == rows.begin()) return nullptr;
  const LaneRow& r = *std::prev(it);
  return y < r.y + r.height ? &r : nullptr;
}

LaneLayout layout_lanes(const TimelineData& t, const std::set<int>& collapsed_nodes, const RowHeights& h) {
  LaneLayout out;
  double y = 0.0;
  bool have_node = false;
  int node = 0;
  for (std::size_t i = 0; i < t.lanes.size(); ++i) {
    const Lane& lane = t.lanes[i];
    if (!have_node || lane.node != node) {
      node = lane.node;
      have_node = true;
      out.rows.push_back({LaneRow::Kind::kNodeHeader, node, 0, y, h.node_header});
      y += h.node_header;
    }
    if (collapsed_nodes.count(node)) continue;
    out.rows.push_back({LaneRow::Kind::kLane, node, i, y, h.lane});
    y += h.lane;
  }
  for (std::size_t c = 0; c < t.counters.size(); ++c) {
    out.rows.push_back({LaneRow::Kind::kCounter, -1, c, y, h.counter});
    y += h.counter;
  }
  out.total_height = y;
  return out;
}

}  // namespace trainsim::gui
