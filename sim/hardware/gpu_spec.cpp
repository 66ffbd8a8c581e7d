#include "hardware/gpu_spec.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace trainsim::hw {

double efficiency_at(const std::vector<EfficiencyPoint>& pts, double flops) {
  if (pts.size() == 1) return pts.front().efficiency;
  if (flops >= pts.back().flops) return pts.back().efficiency;
  const double x = std::log(std::max(flops, 1.0));
  if (flops <= pts.front().flops) {
    // Small kernels fill fewer SMs: extend the first segment's log-log slope.
    const double slope =
        std::log(pts[1].efficiency / pts[0].efficiency) / std::log(pts[1].flops / pts[0].flops);
    const double eff = pts[0].efficiency * std::exp(slope * (x - std::log(pts[0].flops)));
    return std::clamp(eff, 1e-6, pts[0].efficiency);
  }
  const auto hi = std::upper_bound(pts.begin(), pts.end(), flops,
                                   [](double f, const EfficiencyPoint& p) { return f < p.flops; });
  const auto lo = std::prev(hi);
  const double t = (x - std::log(lo->flops)) / (std::log(hi->flops) - std::log(lo->flops));
  return lo->efficiency + t * (hi->efficiency - lo->efficiency);
}

double GpuSpec::peak(Precision p) const {
  const auto it = peak_flops.find(p);
  if (it == peak_flops.end())
    throw std::invalid_argument(name + " has no " + std::string(to_string(p)) + " peak");
  return it->second;
}

}  // namespace trainsim::hw
