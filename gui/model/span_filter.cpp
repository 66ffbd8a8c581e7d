#include "model/span_filter.h"

#include <algorithm>
#include <cctype>

namespace trainsim::gui {

namespace {

bool contains_case_insensitive(const std::string& hay, const std::string& needle) {
  const auto it = std::search(hay.begin(), hay.end(), needle.begin(), needle.end(), [](char a, char b) {
    return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
  });
  return it != hay.end();
}

}  // namespace

bool SpanFilter::matches(const TimelineData& t, const Span& s) const {
  if (!categories.test(static_cast<std::size_t>(s.category))) return false;
  return text.empty() || contains_case_insensitive(t.name_of(s), text);
}

std::optional<SpanRef> find_next(const TimelineData& t, const SpanFilter& f, std::optional<SpanRef> from) {
  const std::size_t total = t.span_count();
  if (total == 0) return std::nullopt;
  SpanRef r = from.value_or(SpanRef{0, 0});
  bool first = !from.has_value();
  for (std::size_t visited = 0; visited <= total; ++visited) {
    if (!first) {
      // Step to the next span, wrapping at the end.
      ++r.index;
      while (r.lane < t.lanes.size() && r.index >= t.lanes[r.lane].spans.size()) {
        ++r.lane;
        r.index = 0;
      }
      if (r.lane >= t.lanes.size()) r = SpanRef{0, 0};
      while (t.lanes[r.lane].spans.empty()) ++r.lane;
    }
    first = false;
    if (r.lane < t.lanes.size() && r.index < t.lanes[r.lane].spans.size() && f.matches(t, t.span(r))) return r;
  }
  return std::nullopt;
}

}  // namespace trainsim::gui
