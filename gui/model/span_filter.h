#pragma once
// Search and filter: spans whose name contains the text (case-insensitive)
// and whose category is enabled. Spans that do not match are drawn faded.
#include <bitset>
#include <optional>
#include <string>

#include "model/timeline_data.h"

namespace trainsim::gui {

struct SpanFilter {
  std::string text;  // empty: every name
  std::bitset<kNumCategories> categories = std::bitset<kNumCategories>().set();

  bool active() const { return !text.empty() || !categories.all(); }
  bool matches(const TimelineData& t, const Span& s) const;
};

// The next matching span after `from` in (lane, index) order, wrapping around;
// nullopt when none matches.
std::optional<SpanRef> find_next(const TimelineData& t, const SpanFilter& f, std::optional<SpanRef> from);

}  // namespace trainsim::gui
