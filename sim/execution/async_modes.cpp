#include "execution/async_modes.h"

namespace trainsim::exec {

std::optional<double> AsyncModes::iteration_time_s(int workers) const {
  if (async_ps) return static_cast<double>(workers) / async_ps->report.updates_per_s;
  if (local_sgd) {
    const double h = static_cast<double>(local_sgd->sync_period);
    return ((h - 1.0) * core::to_seconds(local_sgd->plain_step) + core::to_seconds(local_sgd->averaged_step)) / h;
  }
  return std::nullopt;
}

}  // namespace trainsim::exec
