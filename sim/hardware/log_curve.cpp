#include "hardware/log_curve.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace trainsim::hw {

LogCurve::LogCurve(std::vector<Point> points) {
  for (const Point& p : points)
    if (!(p.x > 0.0) || !std::isfinite(p.x) || !std::isfinite(p.y))
      throw std::invalid_argument("log curve points need a finite x > 0 and a finite y");
  std::stable_sort(points.begin(), points.end(), [](const Point& a, const Point& b) { return a.x < b.x; });
  for (std::size_t i = 0; i < points.size();) {
    std::size_t j = i;
    double sum = 0.0;
    for (; j < points.size() && points[j].x == points[i].x; ++j) sum += points[j].y;
    points_.push_back({points[i].x, sum / static_cast<double>(j - i)});
    i = j;
  }
}

std::optional<double> LogCurve::at(double x) const {
  if (points_.empty() || !(x >= min_x() && x <= max_x())) return std::nullopt;
  const auto hi = std::lower_bound(points_.begin(), points_.end(), x,
                                   [](const Point& p, double v) { return p.x < v; });
  if (hi->x == x) return hi->y;
  const auto lo = std::prev(hi);
  const double t = (std::log(x) - std::log(lo->x)) / (std::log(hi->x) - std::log(lo->x));
  return lo->y + t * (hi->y - lo->y);
}

}  // namespace trainsim::hw
