#include "hardware/ownership.h"

#include <stdexcept>

namespace trainsim::hw {

namespace {
constexpr double kSecondsPerYear = 365.25 * 86400.0;  // Julian year
}

OwnedCost owned_cost(const Ownership& o, long long gpus, double wall_s, double energy_kwh) {
  if (!(o.amortization_years > 0.0)) throw std::invalid_argument("owned cost: amortization_years must be positive");
  if (gpus < 1 || !(wall_s >= 0.0) || !(energy_kwh >= 0.0))
    throw std::invalid_argument("owned cost: needs GPUs, a wall time and an energy, none negative");
  OwnedCost c;
  c.capex_usd = o.capex_per_gpu * static_cast<double>(gpus) * wall_s / (o.amortization_years * kSecondsPerYear);
  c.energy_usd = energy_kwh * o.electricity_price;
  return c;
}

}  // namespace trainsim::hw
