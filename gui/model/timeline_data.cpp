#include "model/timeline_data.h"

#include <algorithm>
#include <limits>

namespace trainsim::gui {

std::size_t TimelineData::span_count() const {
  std::size_t n = 0;
  for (const Lane& l : lanes) n += l.spans.size();
  return n;
}

int TimelineData::node_of(int rank) const {
  if (rank >= 0 && static_cast<std::size_t>(rank) < node_of_rank.size())
    return node_of_rank[static_cast<std::size_t>(rank)];
  return gpus_per_node > 0 ? rank / gpus_per_node : 0;
}

void finalize(TimelineData& t) {
  double lo = std::numeric_limits<double>::infinity();
  double hi = -std::numeric_limits<double>::infinity();
  for (Lane& lane : t.lanes) {
    lane.node = lane.rank < 0 ? -1 : t.node_of(lane.rank);  // rank -1: the whole job, a "node" of its own
    if (!std::is_sorted(lane.spans.begin(), lane.spans.end(),
                        [](const Span& a, const Span& b) { return a.start < b.start; }))
      std::stable_sort(lane.spans.begin(), lane.spans.end(),
                       [](const Span& a, const Span& b) { return a.start < b.start; });
    lane.max_end.resize(lane.spans.size());
    double m = -std::numeric_limits<double>::infinity();
    for (std::size_t i = 0; i < lane.spans.size(); ++i) {
      m = std::max(m, lane.spans[i].end);
      lane.max_end[i] = m;
    }
    if (!lane.spans.empty()) {
      lo = std::min(lo, lane.spans.front().start);
      hi = std::max(hi, m);
    }
  }
  for (const CounterSeries& c : t.counters)
    if (!c.points.empty()) {
      lo = std::min(lo, c.points.front().first);
      hi = std::max(hi, c.points.back().first);
    }
  t.t_begin = lo <= hi ? std::min(lo, 0.0) : 0.0;
  t.t_end = lo <= hi ? hi : 0.0;
}

std::size_t first_reaching(const Lane& lane, double t) {
  return static_cast<std::size_t>(std::lower_bound(lane.max_end.begin(), lane.max_end.end(), t) -
                                  lane.max_end.begin());
}

std::size_t first_starting_at_or_after(const Lane& lane, std::size_t from, double t) {
  const auto begin = lane.spans.begin() + static_cast<std::ptrdiff_t>(from);
  return static_cast<std::size_t>(
      std::lower_bound(begin, lane.spans.end(), t, [](const Span& s, double v) { return s.start < v; }) -
      lane.spans.begin());
}

}  // namespace trainsim::gui
