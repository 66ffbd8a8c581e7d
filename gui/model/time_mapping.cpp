#include "model/time_mapping.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace trainsim::gui {

TimeMapping TimeMapping::zoomed(double factor, double anchor_x) const {
  TimeMapping m = *this;
  const double anchor_t = t_of(anchor_x);
  m.seconds_per_px = std::clamp(seconds_per_px / factor, kMinSecondsPerPx, kMaxSecondsPerPx);
  m.t0 = anchor_t - (anchor_x - x0) * m.seconds_per_px;
  return m;
}

TimeMapping TimeMapping::panned(double dx) const {
  TimeMapping m = *this;
  m.t0 -= dx * seconds_per_px;
  return m;
}

TimeMapping TimeMapping::fit(double t_begin, double t_end, double x0, double width) {
  TimeMapping m;
  m.x0 = x0;
  m.t0 = t_begin;
  const double span = t_end - t_begin;
  m.seconds_per_px = width > 0.0 && span > 0.0 ? std::clamp(span / width, kMinSecondsPerPx, kMaxSecondsPerPx) : 1e-6;
  return m;
}

std::string format_duration(double seconds) {
  const double a = std::abs(seconds);
  char buf[48];
  if (a >= 86400.0) {
    std::snprintf(buf, sizeof buf, "%.4g %s", seconds / 86400.0, std::abs(seconds) == 86400.0 ? "day" : "days");
  } else if (a >= 3600.0) {
    std::snprintf(buf, sizeof buf, "%.4g h", seconds / 3600.0);
  } else if (a >= 60.0) {
    std::snprintf(buf, sizeof buf, "%.4g min", seconds / 60.0);
  } else {
    struct Unit {
      double scale;
      const char* name;
    };
    static constexpr Unit kUnits[] = {{1.0, "s"}, {1e-3, "ms"}, {1e-6, "us"}, {1e-9, "ns"}};
    Unit u = a == 0.0 ? kUnits[0] : kUnits[3];
    if (a > 0.0)
      for (const Unit& c : kUnits)
        if (a >= c.scale * (1.0 - 1e-9)) {
          u = c;
          break;
        }
    std::snprintf(buf, sizeof buf, "%.4g %s", seconds / u.scale, u.name);
  }
  return buf;
}

double ruler_step(double seconds_per_px, double min_spacing_px) {
  const double min_step = seconds_per_px * min_spacing_px;
  constexpr double kTolerance = 1.0 - 1e-12;
  constexpr double kMinute = 60.0;
  constexpr double kDay = 86400.0;
  // Past 50 s, steps a clock reads (a run timeline spans days): 1, 2, 5, 10, 15,
  // 30 min; 1, 2, 3, 6, 12 h; then 1, 2 or 5 x 10^k days.
  if (min_step > 50.0) {
    for (const double m : {1.0, 2.0, 5.0, 10.0, 15.0, 30.0, 60.0, 120.0, 180.0, 360.0, 720.0})
      if (m * kMinute >= min_step * kTolerance) return m * kMinute;
    double days = std::pow(10.0, std::floor(std::log10(min_step / kDay)));
    for (;;) {
      for (const double f : {1.0, 2.0, 5.0})
        if (days * f * kDay >= min_step * kTolerance) return days * f * kDay;
      days *= 10.0;
    }
  }
  double base = std::pow(10.0, std::floor(std::log10(min_step)));
  for (;;) {
    for (const double f : {1.0, 2.0, 5.0})
      if (base * f >= min_step * kTolerance) return base * f;
    base *= 10.0;
  }
}

std::vector<RulerTick> ruler_ticks(const TimeMapping& m, double x_left, double x_right, double min_spacing_px) {
  std::vector<RulerTick> ticks;
  const double step = ruler_step(m.seconds_per_px, min_spacing_px);
  const double t_left = m.t_of(x_left);
  const double t_right = m.t_of(x_right);
  for (double k = std::ceil(t_left / step); k * step <= t_right; k += 1.0) {
    const double t = k * step;
    ticks.push_back({t, m.x_of(t), format_duration(std::abs(t) < step * 1e-6 ? 0.0 : t)});
  }
  return ticks;
}

}  // namespace trainsim::gui
