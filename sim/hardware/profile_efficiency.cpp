#include "hardware/profile_efficiency.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

#include "hardware/log_curve.h"

namespace trainsim::hw {

std::vector<EfficiencyPoint> measured_matmul_efficiency(const std::vector<GemmRow>& gemm, Precision dtype,
                                                        double peak) {
  if (!(peak > 0.0)) return {};
  struct Octave {
    double log_flops_sum = 0.0;
    std::vector<double> efficiency;
  };
  std::map<int, Octave> octaves;
  for (const GemmRow& r : gemm) {
    if (r.dtype != dtype || !(r.seconds > 0.0)) continue;
    const double flops = 2.0 * r.m * r.n * r.k;
    if (!(flops > 0.0) || !std::isfinite(flops)) continue;
    Octave& o = octaves[static_cast<int>(std::floor(std::log2(flops)))];
    o.log_flops_sum += std::log(flops);
    o.efficiency.push_back(flops / r.seconds / peak);
  }
  std::vector<EfficiencyPoint> points;
  for (auto& [octave, o] : octaves) {
    std::vector<double>& e = o.efficiency;
    std::sort(e.begin(), e.end());
    const std::size_t n = e.size();
    const double median = n % 2 == 1 ? e[n / 2] : 0.5 * (e[n / 2 - 1] + e[n / 2]);
    points.push_back({std::exp(o.log_flops_sum / static_cast<double>(n)), std::min(median, 1.0)});
  }
  return points;
}

std::optional<double> measured_copy_bandwidth(const std::vector<CopyRow>& copies, CopyKind kind) {
  std::vector<LogCurve::Point> points;  // bytes -> B/s; the curve averages rows of one size
  for (const CopyRow& c : copies)
    if (c.kind == kind && c.bytes > 0.0 && c.seconds > 0.0) points.push_back({c.bytes, c.bytes / c.seconds});
  if (points.empty()) return std::nullopt;
  const LogCurve curve(std::move(points));
  return curve.at(curve.max_x());
}

}  // namespace trainsim::hw
