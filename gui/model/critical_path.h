#pragma once
// The last iteration's critical path: the chain of spans that ends last, walked
// backwards.
// - With "deps" (span ids): from the span ending last, step to the dependency
//   that ended last, until a span has none.
// - Without: from the span ending last, step to a span on any lane that ends
//   exactly where the current one starts (end == start within half a
//   nanosecond, the timeline's resolution), preferring the same lane, then the
//   lowest lane; when none touches it, to the span that ended last before it on
//   its own lane (the wait is then on that lane).
// Either walk stops at the first span of an earlier iteration.
#include <vector>

#include "model/timeline_data.h"

namespace trainsim::gui {

struct CriticalPath {
  std::vector<SpanRef> spans;  // in time order
  bool from_deps = false;
  double busy_s = 0.0;  // sum of the path's span durations
};

CriticalPath critical_path(const TimelineData& t);

}  // namespace trainsim::gui
