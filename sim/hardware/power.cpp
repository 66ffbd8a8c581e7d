#include "hardware/power.h"

#include <algorithm>

namespace trainsim::hw {

PowerDraw power_draw(const ClusterSpec& c, double utilization, long long spare_nodes) {
  const double u = std::clamp(utilization, 0.0, 1.0);
  const auto gpus = static_cast<double>(c.num_gpus());
  const double spare_gpus = static_cast<double>(spare_nodes) * c.gpus_per_node;
  const GpuSpec& g = c.gpu;
  PowerDraw p;
  p.running_w = gpus * (g.idle_watts + (g.tdp_watts - g.idle_watts) * u);
  p.idle_w = gpus * g.idle_watts;
  p.constant_w = static_cast<double>(c.num_nodes + spare_nodes) * g.node_overhead_watts + spare_gpus * g.idle_watts;
  return p;
}

double energy_kwh(const PowerDraw& p, double pue, double running_s, double wall_s) {
  return pue * (p.running_w * running_s + p.idle_w * (wall_s - running_s) + p.constant_w * wall_s) / 3.6e6;
}

}  // namespace trainsim::hw
