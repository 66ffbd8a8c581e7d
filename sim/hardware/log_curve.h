#pragma once
// A measured rate as a function of size, y(x), read between measured points only:
// linear in ln x between the two neighbouring points (docs/model.md, "Calibrated
// costs"). The profiled compute model keeps one per kernel: achieved bandwidth
// over bytes, or achieved FLOP/s over FLOPs.
#include <optional>
#include <vector>

namespace trainsim::hw {

class LogCurve {
 public:
  struct Point {
    double x = 0.0;
    double y = 0.0;
  };

  LogCurve() = default;
  // Points need x > 0; several points at one x are replaced by the mean of their y.
  explicit LogCurve(std::vector<Point> points);

  [[nodiscard]] bool empty() const { return points_.empty(); }
  [[nodiscard]] double min_x() const { return points_.front().x; }
  [[nodiscard]] double max_x() const { return points_.back().x; }
  // y at x when min_x() <= x <= max_x(), else nothing (the caller falls back).
  [[nodiscard]] std::optional<double> at(double x) const;

 private:
  std::vector<Point> points_;  // sorted by x, one per x
};

}  // namespace trainsim::hw
