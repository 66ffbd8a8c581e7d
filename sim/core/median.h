#pragma once
// The median of a sample: the middle value, or the mean of the two middle values of an
// even count; 0 for an empty one.
#include <algorithm>
#include <vector>

namespace trainsim::core {

[[nodiscard]] inline double median(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace trainsim::core
