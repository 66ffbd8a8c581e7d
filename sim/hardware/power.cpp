#include "hardware/power.h"

#include <algorithm>

namespace trainsim::hw {

PowerDraw power_draw(const ClusterSpec& c, double utilization, long long spare_nodes) {
  const double u = std::clamp(utilization, 0.0, 1.0);
  PowerDraw p;
  // A mixed cluster sums its pools' draws (spare nodes are pool 0's).
  for (int k = 0; k < c.num_pools(); ++k) {
    const GpuSpec& g = c.pool_gpu(k);
    const auto gpus = static_cast<double>(c.pool_gpus(k));
    const auto nodes = static_cast<double>(c.pool_nodes(k));
    p.running_w += gpus * (g.idle_watts + (g.tdp_watts - g.idle_watts) * u);
    p.idle_w += gpus * g.idle_watts;
    p.constant_w += nodes * g.node_overhead_watts;
  }
  const double spare_gpus = static_cast<double>(spare_nodes) * c.gpus_per_node;
  p.constant_w += static_cast<double>(spare_nodes) * c.gpu.node_overhead_watts + spare_gpus * c.gpu.idle_watts;
  return p;
}

double energy_kwh(const PowerDraw& p, double pue, double running_s, double wall_s) {
  return pue * (p.running_w * running_s + p.idle_w * (wall_s - running_s) + p.constant_w * wall_s) / 3.6e6;
}

}  // namespace trainsim::hw
