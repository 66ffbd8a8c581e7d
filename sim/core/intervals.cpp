#include "core/intervals.h"

#include <algorithm>

namespace trainsim::core {

Time union_length(std::vector<Interval> v) {
  if (!std::is_sorted(v.begin(), v.end())) std::sort(v.begin(), v.end());
  Time total = 0;
  Time start = 0;
  Time end = -1;
  for (const auto& [a, b] : v) {
    if (a > end) {
      if (end > start) total += end - start;
      start = a;
      end = b;
    } else {
      end = std::max(end, b);
    }
  }
  if (end > start) total += end - start;
  return total;
}

}  // namespace trainsim::core
