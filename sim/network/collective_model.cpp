#include "network/collective_model.h"

#include <stdexcept>
#include <string>

namespace trainsim::net {

void AnalyticBackend::start(const Collective& c, core::Simulator& sim, std::function<void()> on_done) {
  sim.schedule_after(core::from_seconds(model_->seconds(c)), std::move(on_done));
}

}  // namespace trainsim::net
