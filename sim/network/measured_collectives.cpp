#include "network/measured_collectives.h"

#include "network/collective_engine.h"

namespace trainsim::net {

namespace {

// The profile's operation names (nccl-tests' "all_reduce_perf" and so on,
// docs/calibration.md) for the kinds a measurement stands for. send_recv is not
// one: nccl-tests' sendrecv shifts a ring both ways, the simulator's sends are
// one transfer between two stages.
std::optional<CollectiveKind> kind_of(const std::string& op) {
  for (const CollectiveKind k : {CollectiveKind::kAllReduce, CollectiveKind::kAllGather,
                                 CollectiveKind::kReduceScatter, CollectiveKind::kAllToAll,
                                 CollectiveKind::kBroadcast, CollectiveKind::kReduce})
    if (op == to_string(k)) return k;
  return std::nullopt;
}

// The nodes a row's ranks ran on: 1 for intra_node; an inter_node row's own
// count when it has one of at least 2 that divides its ranks; else 0 (unusable).
long long nodes_of(const hw::CollectiveRow& r) {
  if (r.scope == hw::CollectiveScope::kIntraNode) return r.nodes <= 1 ? 1 : 0;
  if (r.nodes < 2 || r.nodes > r.ranks || r.ranks % r.nodes != 0) return 0;
  return r.nodes;
}

}  // namespace

MeasuredCollectives::MeasuredCollectives(const std::vector<hw::CollectiveRow>& rows) {
  std::map<Shape, std::vector<hw::LogCurve::Point>> points;
  for (const hw::CollectiveRow& r : rows) {
    if (r.ranks < 2 || r.wrong > 0) continue;
    if (!(r.bytes > 0.0) || !(r.seconds > 0.0)) continue;
    const std::optional<CollectiveKind> kind = kind_of(r.op);
    const long long nodes = nodes_of(r);
    if (!kind || nodes == 0) continue;
    points[{*kind, r.ranks, nodes}].push_back({r.bytes, r.bytes / r.seconds});
  }
  for (auto& [key, p] : points) curves_.emplace(key, hw::LogCurve(std::move(p)));
}

std::optional<double> MeasuredCollectives::seconds(const Collective& c) const {
  // The group's spread: `nodes` nodes with ranks_per_node ranks on each. A group
  // of named members spread unevenly has the largest count per node as
  // ranks_per_node (workload/layout.cpp, members_shape), so size == nodes x
  // ranks_per_node holds exactly when every node holds as many: only those match.
  const CommGroup& g = c.group;
  if (g.size < 2 || g.nodes < 1 || g.size != g.nodes * g.ranks_per_node || !(c.bytes > 0.0)) return std::nullopt;
  const auto it = curves_.find({c.kind, g.size, g.nodes});
  if (it == curves_.end()) return std::nullopt;
  const std::optional<double> algbw = it->second.at(c.bytes);
  if (!algbw || !(*algbw > 0.0)) return std::nullopt;
  return c.bytes / *algbw;
}

void MeasuredBackend::start(const Collective& c, core::Simulator& sim, std::function<void()> on_done) {
  if (const std::optional<double> t = table_.seconds(c)) {
    ++measured_;
    sim.schedule_after(ceil_to_time(*t), std::move(on_done));
    return;
  }
  ++modeled_;
  inner_.start(c, sim, std::move(on_done));
}

}  // namespace trainsim::net
