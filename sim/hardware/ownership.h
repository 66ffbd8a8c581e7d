#pragma once
// What an owned cluster costs for one run (docs/model.md, "Owned clusters"): its
// purchase spread over the years it is written off, for the run's wall time,
// plus the electricity the run draws at the site's price. The cloud's figure is
// price_per_gpu_hour; this is the other way to pay for the same GPU-hours.
#include <optional>

namespace trainsim::hw {

struct Ownership {
  double capex_per_gpu = 0.0;        // USD: the system's price over its GPUs (servers, network, install)
  double amortization_years = 0.0;   // straight-line write-off period
  double electricity_price = 0.0;    // USD per kWh at the meter (the energy figures include the PUE)
};

struct OwnedCost {
  double capex_usd = 0.0;   // the share of the purchase the run uses up
  double energy_usd = 0.0;  // its electricity
  [[nodiscard]] double total_usd() const { return capex_usd + energy_usd; }
};

// capex = capex_per_gpu x gpus x wall_s / (amortization_years x 365.25 x 86400);
// energy = energy_kwh x electricity_price.
OwnedCost owned_cost(const Ownership& o, long long gpus, double wall_s, double energy_kwh);

}  // namespace trainsim::hw
