#include "cluster/placement.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <stdexcept>

#include "core/rng.h"
#include "network/topology_builders.h"

namespace trainsim::cluster {

FabricShape fabric_shape(const hw::ClusterSpec& c) {
  FabricShape s;
  s.nodes = c.num_nodes;
  s.gpus_per_node = c.gpus_per_node;
  s.nodes_per_group = c.num_nodes;
  if (c.num_nodes == 1) return s;
  const net::TopologyPlan plan = net::plan_topology(c);
  s.tiers = plan.tiers;
  if (plan.tiers <= 1) return s;
  const int nics = c.inter_node.nics_per_node;
  const int rails = c.inter_node.topology == "rail_optimized" ? c.inter_node.rail_groups() : 1;
  s.nodes_per_group = plan.down_ports / (nics / rails);
  s.groups_per_pod = plan.tiers == 3 ? plan.down_ports / rails : s.groups();
  return s;
}

NodeState::NodeState(const FabricShape& shape, config::PlacementPolicy policy, std::uint64_t seed)
    : shape_(shape),
      policy_(policy),
      free_(static_cast<std::size_t>(shape.nodes), shape.gpus_per_node),
      order_(static_cast<std::size_t>(shape.nodes)),
      down_(static_cast<std::size_t>(shape.nodes), false),
      free_gpus_(static_cast<long long>(shape.nodes) * shape.gpus_per_node) {
  std::iota(order_.begin(), order_.end(), 0);
  // Fisher-Yates with our own generator: the same order on every standard library.
  core::Rng rng(seed);
  for (std::size_t i = order_.size(); i > 1; --i) std::swap(order_[i - 1], order_[rng.below(i)]);
}

std::optional<Placement> NodeState::place(int gpus) const {
  if (gpus > free_gpus_) return std::nullopt;
  if (gpus < shape_.gpus_per_node) return place_small(gpus);
  return place_nodes(gpus / shape_.gpus_per_node);
}

std::optional<Placement> NodeState::place_small(int gpus) const {
  std::optional<int> best;
  if (policy_ == config::PlacementPolicy::kBlind) {
    for (int n : order_)
      if (free_[static_cast<std::size_t>(n)] >= gpus) {
        best = n;
        break;
      }
  } else {
    for (int n = 0; n < shape_.nodes; ++n) {
      const int f = free_[static_cast<std::size_t>(n)];
      if (f >= gpus && (!best || f < free_[static_cast<std::size_t>(*best)])) best = n;
    }
  }
  if (!best) return std::nullopt;
  return Placement{{*best}, gpus};
}

std::optional<Placement> NodeState::place_nodes(int count) const {
  std::vector<int> nodes;
  if (policy_ == config::PlacementPolicy::kBlind) {
    for (int n : order_)
      if (static_cast<int>(nodes.size()) < count && node_free(n)) nodes.push_back(n);
  } else {
    nodes = aware_nodes(count);
  }
  if (static_cast<int>(nodes.size()) < count) return std::nullopt;
  std::sort(nodes.begin(), nodes.end());
  return Placement{std::move(nodes), shape_.gpus_per_node};
}

// Groups by free nodes, most first (then the lowest index), until `count` nodes:
// the fewest groups. Inside one pod when a pod can hold the job (the pod needing the
// fewest groups, then the one with the fewest free nodes: best fit); a single group
// that holds it whole is the fullest such group.
std::vector<int> NodeState::aware_nodes(int count) const {
  const int groups = shape_.groups();
  std::vector<std::vector<int>> free_in(static_cast<std::size_t>(groups));
  for (int n = 0; n < shape_.nodes; ++n)
    if (node_free(n)) free_in[static_cast<std::size_t>(shape_.group_of(n))].push_back(n);
  const auto size_of = [&](int g) { return static_cast<int>(free_in[static_cast<std::size_t>(g)].size()); };
  std::optional<int> single;
  for (int g = 0; g < groups; ++g)
    if (size_of(g) >= count && (!single || size_of(g) < size_of(*single))) single = g;
  const auto take = [&](std::vector<int> chosen) {
    std::stable_sort(chosen.begin(), chosen.end(), [&](int a, int b) { return size_of(a) > size_of(b); });
    std::vector<int> nodes;
    for (int g : chosen)
      for (int n : free_in[static_cast<std::size_t>(g)])
        if (static_cast<int>(nodes.size()) < count) nodes.push_back(n);
    return nodes;
  };
  if (single) return take({*single});
  // Per pod: its groups most free first, and how many of them hold `count` nodes.
  const int pods = (groups + shape_.groups_per_pod - 1) / shape_.groups_per_pod;
  std::optional<int> best_pod;
  int best_needed = 0, best_free = 0;
  std::vector<int> pod_free(static_cast<std::size_t>(pods), 0);
  for (int p = 0; p < pods; ++p) {
    std::vector<int> sizes;
    for (int g = p * shape_.groups_per_pod; g < std::min(groups, (p + 1) * shape_.groups_per_pod); ++g)
      sizes.push_back(size_of(g));
    std::sort(sizes.rbegin(), sizes.rend());
    int needed = 0, got = 0;
    for (int s : sizes)
      if (got < count) got += s, ++needed;
    pod_free[static_cast<std::size_t>(p)] = std::accumulate(sizes.begin(), sizes.end(), 0);
    if (got < count) continue;
    const int total = pod_free[static_cast<std::size_t>(p)];
    if (!best_pod || needed < best_needed || (needed == best_needed && total < best_free))
      best_pod = p, best_needed = needed, best_free = total;
  }
  std::vector<int> chosen;
  std::vector<int> pod_order;
  if (best_pod) {
    pod_order.push_back(*best_pod);
  } else {
    pod_order.resize(static_cast<std::size_t>(pods));
    std::iota(pod_order.begin(), pod_order.end(), 0);
    std::stable_sort(pod_order.begin(), pod_order.end(), [&](int a, int b) {
      return pod_free[static_cast<std::size_t>(a)] > pod_free[static_cast<std::size_t>(b)];
    });
  }
  // Pods in order, each pod's groups most free first.
  std::vector<int> nodes;
  for (int p : pod_order) {
    std::vector<int> in_pod;
    for (int g = p * shape_.groups_per_pod; g < std::min(groups, (p + 1) * shape_.groups_per_pod); ++g)
      in_pod.push_back(g);
    for (int n : take(in_pod))
      if (static_cast<int>(nodes.size()) < count) nodes.push_back(n);
  }
  return nodes;
}

void NodeState::take(const Placement& p) {
  for (int n : p.nodes) free_[static_cast<std::size_t>(n)] -= p.gpus_per_node;
  free_gpus_ -= p.gpus();
}

void NodeState::give_back(const Placement& p) {
  for (int n : p.nodes) free_[static_cast<std::size_t>(n)] += p.gpus_per_node;
  free_gpus_ += p.gpus();
}

void NodeState::fail(int node) {
  const auto n = static_cast<std::size_t>(node);
  if (down_[n] || free_[n] != shape_.gpus_per_node)
    throw std::logic_error("NodeState::fail: a node fails once, with its jobs gone");
  down_[n] = true;
  free_[n] = 0;
  free_gpus_ -= shape_.gpus_per_node;
}

void NodeState::repair(int node) {
  const auto n = static_cast<std::size_t>(node);
  if (!down_[n]) throw std::logic_error("NodeState::repair: the node is not down");
  down_[n] = false;
  free_[n] = shape_.gpus_per_node;
  free_gpus_ += shape_.gpus_per_node;
}

JobView view_of(const FabricShape& shape, const Placement& p) {
  if (p.nodes.size() <= 1 || shape.tiers <= 1) return {};
  // Nodes per group, and per pod.
  std::map<int, int> per_group, per_pod;
  for (int n : p.nodes) ++per_group[shape.group_of(n)], ++per_pod[shape.pod_of(n)];
  const auto most_first = [](const std::map<int, int>& counts) {
    std::vector<std::pair<int, int>> v(counts.begin(), counts.end());  // (index, nodes)
    std::stable_sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
    return v;
  };
  JobView view;
  int pod_rank = 0;
  for (const auto& [pod, pod_nodes] : most_first(per_pod)) {
    if (shape.tiers == 3) view.pod_of_view[pod_rank] = pod;
    std::map<int, int> groups_here;
    for (const auto& [g, nodes] : per_group)
      if (g / shape.groups_per_pod == pod) groups_here[g] = nodes;
    int slot = 0;
    for (const auto& [g, nodes] : most_first(groups_here)) {
      const int id = pod_rank * shape.groups_per_pod + slot;
      view.node_groups.insert(view.node_groups.end(), static_cast<std::size_t>(nodes), id);
      view.group_of_view[id] = g;
      ++slot;
    }
    ++pod_rank;
  }
  return view;
}

}  // namespace trainsim::cluster
