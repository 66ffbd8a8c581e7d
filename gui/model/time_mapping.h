#pragma once
// Time to pixel and back: the one mapping every painter, hit test and ruler
// uses. A value type, so zoom/pan history is a stack of these.
#include <string>
#include <vector>

namespace trainsim::gui {

struct TimeMapping {
  double t0 = 0.0;               // time shown at pixel x0, s
  double seconds_per_px = 1e-6;  // zoom
  double x0 = 0.0;               // left edge of the time area, px

  double x_of(double t) const { return x0 + (t - t0) / seconds_per_px; }
  double t_of(double x) const { return t0 + (x - x0) * seconds_per_px; }

  // Zoom by `factor` (> 1 zooms in) keeping the time under pixel `anchor_x` there.
  TimeMapping zoomed(double factor, double anchor_x) const;
  // Move the content right by dx pixels (a drag to the right shows earlier times).
  TimeMapping panned(double dx) const;
  // [t_begin, t_end] fills [x0, x0 + width) exactly.
  static TimeMapping fit(double t_begin, double t_end, double x0, double width);

  static constexpr double kMinSecondsPerPx = 1e-12;
  static constexpr double kMaxSecondsPerPx = 1e6;
};

// "1.5 ms", "250 ns", "2 s": a duration in the unit its size calls for.
std::string format_duration(double seconds);

struct RulerTick {
  double t = 0.0;
  double x = 0.0;
  std::string label;
};
// Ticks at 1, 2 or 5 x 10^k seconds up to 50 s, then at 1, 2, 5, 10, 15, 30 min,
// 1, 2, 3, 6, 12 h and 1, 2 or 5 x 10^k days, at least min_spacing_px apart, covering
// [x_left, x_right].
std::vector<RulerTick> ruler_ticks(const TimeMapping& m, double x_left, double x_right, double min_spacing_px);
// The tick step ruler_ticks uses (s).
double ruler_step(double seconds_per_px, double min_spacing_px);

}  // namespace trainsim::gui
