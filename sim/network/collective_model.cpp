#include "network/collective_model.h"

#include <stdexcept>
#include <string>

namespace trainsim::net {

double Ring::all_reduce(double bytes, int n) const {
  if (n <= 1) return 0.0;
  const double steps = 2.0 * (n - 1);
  return steps * latency + steps / n * bytes / bandwidth;
}

double Ring::reduce_scatter(double bytes, int n) const {
  if (n <= 1) return 0.0;
  const double steps = n - 1.0;
  return steps * latency + steps / n * bytes / bandwidth;
}

HierarchicalRingModel::HierarchicalRingModel(const hw::ClusterSpec& cluster)
    : intra_{cluster.nvlink_bandwidth(), cluster.intra_node.latency},
      inter_{cluster.nic_bandwidth_per_gpu(), cluster.inter_node.latency} {}

double HierarchicalRingModel::seconds(const Collective& c) const {
  const CommGroup& g = c.group;
  if (g.size != g.nodes * g.ranks_per_node || g.size < 1)
    throw std::invalid_argument("collective group: size " + std::to_string(g.size) + " != nodes " +
                                std::to_string(g.nodes) + " x ranks per node " + std::to_string(g.ranks_per_node));
  if (c.bytes < 0.0) throw std::invalid_argument("collective of negative size");
  if (g.size == 1) return 0.0;
  const int k = g.ranks_per_node;
  const int n = g.nodes;
  // A single-node cluster may have no NICs and a one-GPU node no NVSwitch; the
  // scenario reader requires each link a layout can use.
  if ((k > 1 && !(intra_.bandwidth > 0.0)) || (n > 1 && !(inter_.bandwidth > 0.0)))
    throw std::invalid_argument("collective model: a link this group uses has no bandwidth");
  switch (c.kind) {
    case CollectiveKind::kAllReduce:
      if (n == 1) return intra_.all_reduce(c.bytes, k);
      return intra_.reduce_scatter(c.bytes, k) + inter_.all_reduce(c.bytes / k, n) +
             intra_.all_gather(c.bytes, k);
    case CollectiveKind::kReduceScatter:
    case CollectiveKind::kAllGather:
      // Reduce-scatter: node-local ring over S, then k inter-node rings over S/k
      // each (all-gather runs the same steps in reverse, at the same cost).
      if (n == 1) return intra_.reduce_scatter(c.bytes, k);
      return intra_.reduce_scatter(c.bytes, k) + inter_.reduce_scatter(c.bytes / k, n);
    case CollectiveKind::kAllToAll:
    case CollectiveKind::kBroadcast:
    case CollectiveKind::kReduce:
    case CollectiveKind::kSendRecv:
      break;
  }
  throw std::invalid_argument("analytic collective model: " + std::string(to_string(c.kind)) +
                              " is not modeled yet (network issue 3)");
}

void AnalyticBackend::start(const Collective& c, core::Simulator& sim, std::function<void()> on_done) {
  sim.schedule_after(core::from_seconds(model_->seconds(c)), std::move(on_done));
}

}  // namespace trainsim::net
