#pragma once
// Cost models of collectives. The analytic model here is alpha-beta over rings:
// flat inside a node, hierarchical across nodes (docs/model.md, "Communication").
// The flow-level model (issue 3) plugs in behind CommunicationBackend.
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

// One ring step costs `latency`; the bandwidth term moves the ring's share of S at
// `bandwidth` (B/s). all_reduce: 2(n-1) alpha + 2(n-1)/n S/B; all_gather and
// reduce_scatter: (n-1) alpha + (n-1)/n S/B (Patarasuk & Yuan 2009; Thakur et al. 2005).
struct Ring {
  double bandwidth = 0.0;
  double latency = 0.0;
  [[nodiscard]] double all_reduce(double bytes, int n) const;
  [[nodiscard]] double reduce_scatter(double bytes, int n) const;
  [[nodiscard]] double all_gather(double bytes, int n) const { return reduce_scatter(bytes, n); }
};

// Within one node: a ring over NVSwitch. Across nodes: reduce-scatter inside each
// node, k concurrent inter-node rings (one per local rank, each on its share of
// the NICs) over S/k, then all-gather inside each node.
class HierarchicalRingModel final : public CollectiveModel {
 public:
  explicit HierarchicalRingModel(const hw::ClusterSpec& cluster);
  [[nodiscard]] double seconds(const Collective& c) const override;
  [[nodiscard]] std::string_view name() const override { return "analytic (hierarchical ring, alpha-beta)"; }
  [[nodiscard]] const Ring& intra() const { return intra_; }
  [[nodiscard]] const Ring& inter() const { return inter_; }

 private:
  Ring intra_;
  Ring inter_;
};

// Runs collectives on the simulator's clock: start() calls on_done when the
// collective completes. Analytic models finish after a computed duration; the
// flow model (issue 3) will finish when its last flow drains.
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
