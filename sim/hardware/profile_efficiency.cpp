#include "hardware/profile_efficiency.h"

#include <algorithm>
#include <cmath>
#include <map>

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
  double largest = 0.0;
  double sum = 0.0;
  int rows = 0;
  for (const CopyRow& c : copies) {
    if (c.kind != kind || !(c.bytes > 0.0) || !(c.seconds > 0.0)) continue;
    if (c.bytes > largest) {
      largest = c.bytes;
      sum = 0.0;
      rows = 0;
    }
    if (c.bytes == largest) {
      sum += c.bytes / c.seconds;
      ++rows;
    }
  }
  if (rows == 0) return std::nullopt;
  return sum / rows;
}

}  // namespace trainsim::hw
