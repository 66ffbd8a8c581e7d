#include "model/critical_path.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <unordered_map>

namespace trainsim::gui {

namespace {

// Times as integer nanoseconds, the timeline's resolution.
std::int64_t ns(double t) { return std::llround(t * 1e9); }

std::optional<SpanRef> last_ending(const TimelineData& t) {
  std::optional<SpanRef> best;
  double best_end = 0.0;
  for (std::size_t l = 0; l < t.lanes.size(); ++l)
    for (std::size_t i = 0; i < t.lanes[l].spans.size(); ++i) {
      const Span& s = t.lanes[l].spans[i];
      if (!best || s.end > best_end) {
        best = SpanRef{l, i};
        best_end = s.end;
      }
    }
  return best;
}

std::vector<SpanRef> walk_deps(const TimelineData& t, SpanRef start) {
  std::unordered_map<std::int64_t, SpanRef> by_id;
  for (std::size_t l = 0; l < t.lanes.size(); ++l)
    for (std::size_t i = 0; i < t.lanes[l].spans.size(); ++i)
      if (t.lanes[l].spans[i].id >= 0) by_id.emplace(t.lanes[l].spans[i].id, SpanRef{l, i});
  std::vector<SpanRef> path{start};
  const int iteration = t.span(start).iteration;
  for (std::size_t guard = 0; guard < t.span_count(); ++guard) {
    const Span& s = t.span(path.back());
    std::optional<SpanRef> next;
    for (std::uint32_t d = 0; d < s.deps_count; ++d) {
      const auto it = by_id.find(t.deps[s.deps_begin + d]);
      if (it == by_id.end()) continue;
      if (!next || t.span(it->second).end > t.span(*next).end) next = it->second;
    }
    if (!next || t.span(*next).iteration != iteration) break;
    path.push_back(*next);
  }
  return path;
}

std::vector<SpanRef> walk_adjacent(const TimelineData& t, SpanRef start) {
  std::unordered_map<std::int64_t, std::vector<SpanRef>> by_end;
  for (std::size_t l = 0; l < t.lanes.size(); ++l)
    for (std::size_t i = 0; i < t.lanes[l].spans.size(); ++i)
      by_end[ns(t.lanes[l].spans[i].end)].push_back(SpanRef{l, i});
  std::vector<SpanRef> path{start};
  const int iteration = t.span(start).iteration;
  for (std::size_t guard = 0; guard < t.span_count(); ++guard) {
    const SpanRef cur = path.back();
    const Span& s = t.span(cur);
    std::optional<SpanRef> next;
    if (const auto it = by_end.find(ns(s.start)); it != by_end.end()) {
      for (const SpanRef& c : it->second) {
        if (c == cur || t.span(c).end <= t.span(c).start) continue;  // zero-length spans cannot chain
        if (c.lane == cur.lane) {
          next = c;
          break;
        }
        if (!next) next = c;
      }
    }
    if (!next) {
      // Nothing touches it: the latest span on the same lane that ended before it.
      const Lane& lane = t.lanes[cur.lane];
      for (std::size_t i = cur.index; i-- > 0;)
        if (lane.spans[i].end <= s.start) {
          next = SpanRef{cur.lane, i};
          break;
        }
    }
    if (!next || t.span(*next).iteration != iteration) break;
    path.push_back(*next);
  }
  return path;
}

}  // namespace

CriticalPath critical_path(const TimelineData& t) {
  CriticalPath cp;
  const auto start = last_ending(t);
  if (!start) return cp;
  cp.from_deps = !t.deps.empty();
  cp.spans = cp.from_deps ? walk_deps(t, *start) : walk_adjacent(t, *start);
  std::reverse(cp.spans.begin(), cp.spans.end());
  for (const SpanRef& r : cp.spans) cp.busy_s += t.span(r).end - t.span(r).start;
  return cp;
}

}  // namespace trainsim::gui
