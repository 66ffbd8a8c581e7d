#pragma once
// The interface the executor runs collectives through (CommunicationBackend),
// and a backend that charges each collective a duration from a CollectiveModel
// (tests use it with simple models). The topology-aware backends, analytic and
// flow, are in collective_engine.h.
#include <functional>
#include <memory>
#include <string_view>

#include "core/simulator.h"
#include "hardware/cluster.h"
#include "network/collective.h"

namespace trainsim::net {

class CollectiveModel {
 public:
  virtual ~CollectiveModel() = default;
  [[nodiscard]] virtual double seconds(const Collective& c) const = 0;
  [[nodiscard]] virtual std::string_view name() const = 0;
};

// Runs collectives on the simulator's clock: start() calls on_done when the
// collective completes.
class CommunicationBackend {
 public:
  virtual ~CommunicationBackend() = default;
  virtual void start(const Collective& c, core::Simulator& sim, std::function<void()> on_done) = 0;
  [[nodiscard]] virtual std::string_view name() const = 0;
};

class AnalyticBackend final : public CommunicationBackend {
 public:
  explicit AnalyticBackend(std::unique_ptr<CollectiveModel> model) : model_(std::move(model)) {}
  void start(const Collective& c, core::Simulator& sim, std::function<void()> on_done) override;
  [[nodiscard]] std::string_view name() const override { return model_->name(); }
  [[nodiscard]] const CollectiveModel& model() const { return *model_; }

 private:
  std::unique_ptr<CollectiveModel> model_;
};

}  // namespace trainsim::net
