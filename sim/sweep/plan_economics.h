#pragma once
// What the best layout of a plan's cluster option costs and draws (docs/sweep.md,
// "Owned clusters"): its time to train and energy as the plan reports them (the
// p50 trial's under failures), the cloud's price for it, an owned cluster's cost
// where the option has "ownership", both per billion tokens, and which options
// are on the front of time to train against cost.
#include <optional>
#include <vector>

#include "config/sweep_spec.h"
#include "hardware/ownership.h"
#include "sweep/evaluate.h"

namespace trainsim::sweep {

struct PlanEconomics {
  std::optional<double> time_to_train_s;
  std::optional<double> energy_kwh;
  std::optional<double> cloud_usd;
  std::optional<hw::OwnedCost> owned;
  double train_tokens = 0.0;

  // The cost the plan compares options by: owned where given, else the cloud's.
  [[nodiscard]] std::optional<double> cost() const { return owned ? std::optional(owned->total_usd()) : cloud_usd; }
  // v / train_tokens x 1e9, when both are known.
  [[nodiscard]] std::optional<double> per_billion_tokens(std::optional<double> v) const;
};

PlanEconomics plan_economics(const config::ClusterOption& c, const PointResult& r);

// How many copies of a cluster option a site of `site_power` W feeds at full load:
// each draws PUE x (N_gpu TDP + N_node P_node), every GPU at its TDP (hw::power_draw
// at utilization 1).
struct SiteFit {
  double facility_peak_w = 0.0;  // one cluster, PUE included
  long long clusters = 0;
  long long gpus = 0;
};
SiteFit site_fit(const hw::ClusterSpec& c, double site_power);

// How a cluster option's servers fill racks of `rack_power` W each (IT side, what a
// rack position's power and cooling take): a server draws gpus_per_node TDP + P_node
// at full load; a scale-up domain of several servers (an NVL72 rack's trays) sits in
// one rack, so a rack takes whole domains. servers_per_rack 0: one server (or domain)
// alone exceeds the rack.
struct RackFit {
  double server_w = 0.0;        // one server at full load
  long long servers_per_rack = 0;
  double rack_w = 0.0;          // a full rack's draw: servers_per_rack x server_w
  long long racks = 0;          // racks one cluster takes (0 when it does not fit)
};
RackFit rack_fit(const hw::ClusterSpec& c, double rack_power);

// For each option, whether it is on the Pareto front of time to train against
// cost(): no other option is as fast and as cheap and better in one. Options
// without both are not on it.
std::vector<bool> plan_front(const std::vector<std::optional<PlanEconomics>>& options);

}  // namespace trainsim::sweep
