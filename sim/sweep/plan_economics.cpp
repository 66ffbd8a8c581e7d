#include "sweep/plan_economics.h"

#include <cmath>

#include "hardware/power.h"
#include "sweep/ranking.h"

namespace trainsim::sweep {

std::optional<double> PlanEconomics::per_billion_tokens(std::optional<double> v) const {
  if (!v || !(train_tokens > 0.0)) return std::nullopt;
  return *v / train_tokens * 1e9;
}

PlanEconomics plan_economics(const config::ClusterOption& c, const PointResult& r) {
  PlanEconomics e;
  e.train_tokens = c.base.training.train_tokens.value_or(0.0);
  if (r.reliability) {
    e.time_to_train_s = r.reliability->time_to_train_p50_s;
    e.energy_kwh = r.reliability->energy_kwh;
    e.cloud_usd = r.reliability->cost_p50_usd;
  } else {
    e.time_to_train_s = r.time_to_train_s;
    e.energy_kwh = r.energy_kwh;
    e.cloud_usd = r.cost_usd;
  }
  const hw::ClusterSpec& cluster = c.base.cluster;
  if (cluster.ownership && e.time_to_train_s && e.energy_kwh)
    e.owned = hw::owned_cost(*cluster.ownership, cluster.num_gpus(), *e.time_to_train_s, *e.energy_kwh);
  return e;
}

SiteFit site_fit(const hw::ClusterSpec& c, double site_power) {
  const hw::PowerDraw p = hw::power_draw(c, 1.0);
  SiteFit f;
  f.facility_peak_w = (p.running_w + p.constant_w) * c.pue;
  if (!(f.facility_peak_w > 0.0)) return f;
  f.clusters = static_cast<long long>(std::floor(site_power / f.facility_peak_w));
  f.gpus = f.clusters * c.num_gpus();
  return f;
}

RackFit rack_fit(const hw::ClusterSpec& c, double rack_power) {
  const hw::PowerDraw p = hw::power_draw(c, 1.0);
  RackFit f;
  f.server_w = (p.running_w + p.constant_w) / c.num_nodes;
  if (!(f.server_w > 0.0)) return f;
  const double unit_w = f.server_w * c.nodes_per_domain;  // a server, or a scale-up domain of them
  f.servers_per_rack = static_cast<long long>(std::floor(rack_power / unit_w)) * c.nodes_per_domain;
  if (f.servers_per_rack == 0) return f;
  f.rack_w = static_cast<double>(f.servers_per_rack) * f.server_w;
  f.racks = (c.num_nodes + f.servers_per_rack - 1) / f.servers_per_rack;
  return f;
}

std::vector<bool> plan_front(const std::vector<std::optional<PlanEconomics>>& options) {
  std::vector<TimeCost> points;
  std::vector<std::size_t> option_of;
  for (std::size_t i = 0; i < options.size(); ++i) {
    if (!options[i] || !options[i]->time_to_train_s || !options[i]->cost()) continue;
    points.push_back({*options[i]->time_to_train_s, *options[i]->cost(), static_cast<std::uint64_t>(i)});
    option_of.push_back(i);
  }
  std::vector<bool> front(options.size(), false);
  for (std::size_t k : pareto_front(points)) front[option_of[k]] = true;
  return front;
}

}  // namespace trainsim::sweep
