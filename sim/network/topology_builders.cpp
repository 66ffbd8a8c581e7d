#include "network/topology_builders.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <numeric>
#include <optional>

#include <fmt/format.h>

namespace trainsim::net {

namespace {

int ceil_div(long long a, long long b) { return static_cast<int>((a + b - 1) / b); }

struct Sizes {
  long long nics = 0;  // NICs in the cluster
  int radix = 0;
  int down = 0;  // NIC-facing ports per leaf
};

// The fat tree above `leaves` leaves: 2 tiers when every leaf can reach every
// spine, otherwise 3 with pods of `down` leaves.
void plan_tiers(TopologyPlan& p, int leaves, int radix, int forced, const std::string& why) {
  const int d = radix / 2;
  p.leaves = leaves;
  if (leaves == 1 && forced != 3) {
    p.tiers = 1;
    return;
  }
  if (forced == 1)
    throw TopologyError("inter_node/tiers", fmt::format("one switch tier is one switch; {} needs {} leaves", why, leaves));
  if (forced == 2 || (forced == 0 && leaves <= radix)) {
    if (leaves > radix)
      throw TopologyError("inter_node/tiers", fmt::format("a 2-tier fat tree of radix {} joins at most {} leaves; {} needs {} (use 3 tiers or a larger switch_radix)", radix, radix, why, leaves));
    p.tiers = 2;
    p.spines = d;
    return;
  }
  p.pods = ceil_div(leaves, d);
  if (p.pods > radix)
    throw TopologyError("inter_node/switch_radix", fmt::format("a 3-tier fat tree of radix {} holds at most {} leaves ({} NIC ports); {} needs {} leaves: raise switch_radix", radix, radix * d, static_cast<long long>(radix) * d * d, why, leaves));
  p.tiers = 3;
  p.spines = p.pods * d;
  p.cores = d * d;
}

std::string fat_tree_text(const TopologyPlan& p, int radix) {
  if (p.tiers == 1) return fmt::format("1 switch of radix {}", radix);
  if (p.tiers == 2) return fmt::format("2-tier fat tree, radix {}: {} leaves, {} spines", radix, p.leaves, p.spines);
  return fmt::format("3-tier fat tree, radix {}: {} pods, {} leaves, {} aggregation, {} core switches", radix, p.pods,
                     p.leaves, p.spines, p.cores);
}

// The NIC a custom cable's end is, or none for a switch. The scenario reader has
// checked the NICs of a file against the cluster; a cluster built in code is
// checked here.
std::optional<hw::NicId> nic_of(const hw::ClusterSpec& c, const hw::CableEnd& e, std::size_t i, const char* end) {
  if (e.nic && (e.nic->node < 0 || e.nic->node >= c.num_nodes || e.nic->rail < 0 ||
                e.nic->rail >= c.inter_node.nics_per_node))
    throw TopologyError(fmt::format("inter_node/links/{}/{}", i, end),
                        fmt::format("\"{}\" names no NIC: nodes are 0..{}, NICs 0..{}", e.name, c.num_nodes - 1,
                                    c.inter_node.nics_per_node - 1));
  return e.nic;
}

// Every cable joins two different ends, at most one of them a NIC, and every NIC
// has exactly one cable.
void check_custom(const hw::ClusterSpec& c) {
  std::vector<int> cables(static_cast<std::size_t>(c.num_nodes) * static_cast<std::size_t>(c.inter_node.nics_per_node), 0);
  for (std::size_t i = 0; i < c.inter_node.custom_links.size(); ++i) {
    const hw::CustomLink& l = c.inter_node.custom_links[i];
    const std::optional<hw::NicId> nic_a = nic_of(c, l.a, i, "a");
    const std::optional<hw::NicId> nic_b = nic_of(c, l.b, i, "b");
    if (l.a.name == l.b.name)
      throw TopologyError(fmt::format("inter_node/links/{}", i), "a cable between two different ends");
    if (nic_a && nic_b)
      throw TopologyError(fmt::format("inter_node/links/{}", i), "a NIC cabled to a switch, not to another NIC");
    if (nic_a || nic_b) {
      const hw::NicId nic = nic_a ? *nic_a : *nic_b;
      if (++cables[static_cast<std::size_t>(nic.node * c.inter_node.nics_per_node + nic.rail)] > 1)
        throw TopologyError(fmt::format("inter_node/links/{}", i),
                            fmt::format("node{}.nic{} cabled twice; a NIC has one port", nic.node, nic.rail));
    }
  }
  for (std::size_t n = 0; n < cables.size(); ++n)
    if (cables[n] == 0)
      throw TopologyError("inter_node/links",
                          fmt::format("a cable for every NIC; node{}.nic{} has none",
                                      n / static_cast<std::size_t>(c.inter_node.nics_per_node),
                                      n % static_cast<std::size_t>(c.inter_node.nics_per_node)));
}

}  // namespace

std::vector<int> torus_dimensions(int nodes, int d) {
  std::vector<int> best;
  std::vector<int> cur;
  std::function<void(int, int)> search = [&](int left, int slots) {
    if (slots == 1) {
      cur.push_back(left);
      const bool better = best.empty() || *std::max_element(cur.begin(), cur.end()) <
                                              *std::max_element(best.begin(), best.end());
      if (better) best = cur;
      cur.pop_back();
      return;
    }
    for (int f = 1; f <= left; ++f) {
      if (left % f != 0 || (!cur.empty() && f < cur.back())) continue;
      cur.push_back(f);
      search(left / f, slots - 1);
      cur.pop_back();
    }
  };
  search(nodes, d);
  std::sort(best.rbegin(), best.rend());
  return best;
}

hw::ClusterSpec domain_view(const hw::ClusterSpec& cluster) {
  if (cluster.nodes_per_domain == 1) return cluster;
  if (cluster.nodes_per_domain < 1 || cluster.num_nodes % cluster.nodes_per_domain != 0)
    throw TopologyError("scale_up_domain", fmt::format("{} nodes are not a whole number of {}-node scale-up domains",
                                                       cluster.num_nodes, cluster.nodes_per_domain));
  hw::ClusterSpec d = cluster;
  d.num_nodes = cluster.num_domains();
  d.gpus_per_node = cluster.gpus_per_domain();
  d.inter_node.nics_per_node = cluster.nics_per_domain();
  if (d.inter_node.rails == 0) d.inter_node.rails = cluster.inter_node.nics_per_node;
  d.nodes_per_domain = 1;
  return d;
}

TopologyPlan plan_topology(const hw::ClusterSpec& cluster) {
  const hw::ClusterSpec c = domain_view(cluster);
  TopologyPlan p;
  const hw::InterNodeNetwork& n = c.inter_node;
  if (c.num_nodes == 1) {
    p.kind = "single_node";
    p.description = cluster.nodes_per_domain == 1
                        ? fmt::format("one node of {} GPUs on {}", c.gpus_per_node, c.intra_node.fabric)
                        : fmt::format("one scale-up domain of {} GPUs ({} nodes of {}) on {}", c.gpus_per_node,
                                      cluster.nodes_per_domain, cluster.gpus_per_node, c.intra_node.fabric);
    return p;
  }
  p.kind = n.topology;
  const long long nics = static_cast<long long>(c.num_nodes) * n.nics_per_node;
  const int radix = n.switch_radix;
  const int d = radix / 2;
  if (!n.node_groups.empty() && n.topology != "fat_tree" && n.topology != "rail_optimized")
    throw TopologyError("inter_node/topology", fmt::format("a job's placement on a shared cluster is modeled on "
                                                           "fat_tree and rail_optimized networks, not {}", n.topology));
  if (!n.node_groups.empty() && static_cast<int>(n.node_groups.size()) != c.num_nodes)
    throw TopologyError("inter_node/node_groups", fmt::format("one leaf group per node: {} for {} nodes",
                                                              n.node_groups.size(), c.num_nodes));
  const int placed_groups =
      n.node_groups.empty() ? 0 : *std::max_element(n.node_groups.begin(), n.node_groups.end()) + 1;
  if (n.topology == "fat_tree" && !n.node_groups.empty()) {
    if (n.nics_per_node > d || d % n.nics_per_node != 0)
      throw TopologyError("inter_node/nics_per_node", fmt::format("a placed node sits under one leaf: its {} NICs "
                                                                  "must divide a leaf's {} downlinks",
                                                                  n.nics_per_node, d));
    p.down_ports = d;
    plan_tiers(p, placed_groups, radix, n.tiers, fmt::format("{} placed leaves", placed_groups));
    p.description = fat_tree_text(p, radix);
  } else if (n.topology == "fat_tree") {
    if (n.tiers == 1 || (n.tiers == 0 && nics <= radix)) {
      if (nics > radix)
        throw TopologyError("inter_node/tiers", fmt::format("one switch of radix {} holds {} NICs; the cluster has {}", radix, radix, nics));
      p.down_ports = radix;
      p.tiers = 1;
      p.leaves = 1;
    } else {
      p.down_ports = d;
      plan_tiers(p, ceil_div(nics, d), radix, n.tiers, fmt::format("{} NICs", nics));
    }
    p.description = fat_tree_text(p, radix);
  } else if (n.topology == "rail_optimized") {
    const int rails = n.rail_groups();
    if (n.nics_per_node % rails != 0)
      throw TopologyError("inter_node/rails", fmt::format("{} rails do not divide {} NICs per node", rails, n.nics_per_node));
    const int per_node = n.nics_per_node / rails;
    if (per_node > d)
      throw TopologyError("inter_node/rails", fmt::format("{} NICs per node on one rail exceed a leaf's {} downlinks", per_node, d));
    const int nodes_per_leaf = d / per_node;
    const int units = n.node_groups.empty() ? ceil_div(c.num_nodes, nodes_per_leaf) : placed_groups;
    p.down_ports = d;
    plan_tiers(p, units * rails, radix, n.tiers, fmt::format("{} rails x {} node groups", rails, units));
    p.description = fmt::format("rail-optimized, {} rails of {} nodes per leaf; {}", rails, nodes_per_leaf,
                                fat_tree_text(p, radix));
  } else if (n.topology == "torus2d" || n.topology == "torus3d") {
    const int dims = n.topology == "torus2d" ? 2 : 3;
    if (!n.torus_dims.empty()) {
      if (static_cast<int>(n.torus_dims.size()) != dims)
        throw TopologyError("inter_node/torus_dims", fmt::format("{} sizes for {}", dims, n.topology));
      long long product = 1;
      for (int s : n.torus_dims) product *= s;
      if (product != c.num_nodes)
        throw TopologyError("inter_node/torus_dims",
                            fmt::format("sizes whose product is num_nodes = {}; got {}", c.num_nodes, product));
      p.dims = n.torus_dims;
    } else {
      p.dims = torus_dimensions(c.num_nodes, dims);
    }
    p.description = fmt::format("{}D torus {}, one router per node", dims, fmt::join(p.dims, "x"));
  } else if (n.topology == "dragonfly") {
    p.hosts_per_router = std::max(1, radix / 4);
    p.global_per_router = std::max(1, radix / 4);
    p.routers_per_group = std::max(2, radix / 2);
    const long long per_group = static_cast<long long>(p.routers_per_group) * p.hosts_per_router;
    p.groups = ceil_div(nics, per_group);
    const int max_groups = p.routers_per_group * p.global_per_router + 1;
    if (p.groups > max_groups)
      throw TopologyError("inter_node/switch_radix",
                          fmt::format("a dragonfly of radix {} holds at most {} groups of {} NICs; {} NICs need {}: raise switch_radix",
                                      radix, max_groups, per_group, nics, p.groups));
    p.description = fmt::format("dragonfly, radix {}: {} groups of {} routers, {} NICs and {} global links per router",
                                radix, p.groups, p.routers_per_group, p.hosts_per_router, p.global_per_router);
  } else if (n.topology == "custom") {
    if (n.custom_links.empty())
      throw TopologyError("inter_node/links", "a custom topology needs \"links\": a list of cables");
    check_custom(c);
    p.description = fmt::format("custom topology of {} cables", n.custom_links.size());
  } else {
    throw TopologyError("inter_node/topology", "unknown topology \"" + n.topology + "\"");
  }
  return p;
}

namespace {

struct Cables {
  double capacity;  // achievable B/s of one network cable
  double nic_latency;
  double hop_latency;
};

// The part of a leaf group's or a pod's uplinks the job has (a shared cluster's other
// jobs use the rest: InterNodeNetwork::group_uplink_share, pod_uplink_share).
double share_of(const std::vector<double>& shares, std::size_t i) { return i < shares.size() ? shares[i] : 1.0; }

// `share(l)`: the part of leaf l's uplinks the job has.
void build_fat_tree_above(Topology& t, const TopologyPlan& p, const std::vector<VertexId>& leaves, const Cables& k,
                          const hw::InterNodeNetwork& n, const std::function<double(std::size_t)>& share) {
  const double up = k.capacity / n.oversubscription;
  if (p.tiers == 1) return;
  const int d = p.tiers == 2 ? p.spines : p.spines / p.pods;
  if (p.tiers == 2) {
    std::vector<VertexId> spines;
    for (int s = 0; s < p.spines; ++s) spines.push_back(t.add_switch(2, fmt::format("spine{}", s)));
    for (std::size_t l = 0; l < leaves.size(); ++l)
      for (VertexId s : spines) t.add_cable(leaves[l], s, up * share(l), k.hop_latency, LinkKind::kFabric);
    return;
  }
  std::vector<VertexId> cores;
  for (int c = 0; c < p.cores; ++c) cores.push_back(t.add_switch(3, fmt::format("core{}", c)));
  for (int pod = 0; pod < p.pods; ++pod) {
    std::vector<VertexId> aggs;
    for (int a = 0; a < d; ++a) aggs.push_back(t.add_switch(2, fmt::format("pod{}.agg{}", pod, a), pod));
    for (int l = pod * d; l < std::min<int>((pod + 1) * d, static_cast<int>(leaves.size())); ++l)
      for (VertexId a : aggs)
        t.add_cable(leaves[static_cast<std::size_t>(l)], a, up * share(static_cast<std::size_t>(l)), k.hop_latency,
                    LinkKind::kFabric);
    for (int a = 0; a < d; ++a)
      for (int m = 0; m < d; ++m)
        t.add_cable(aggs[static_cast<std::size_t>(a)], cores[static_cast<std::size_t>(a * d + m)],
                    k.capacity * share_of(n.pod_uplink_share, static_cast<std::size_t>(pod)), k.hop_latency,
                    LinkKind::kFabric);
  }
}

void build_fat_tree(Topology& t, const TopologyPlan& p, const hw::ClusterSpec& c, const Cables& k) {
  const int nics = c.inter_node.nics_per_node;
  std::vector<VertexId> leaves;
  for (int l = 0; l < p.leaves; ++l) leaves.push_back(t.add_switch(1, fmt::format("leaf{}", l), l));
  const std::vector<int>& placed = c.inter_node.node_groups;
  long long i = 0;
  for (int node = 0; node < c.num_nodes; ++node)
    for (int r = 0; r < nics; ++r, ++i) {
      const long long leaf = placed.empty() ? i / p.down_ports : placed[static_cast<std::size_t>(node)];
      t.add_cable(t.nic(node, r), leaves[static_cast<std::size_t>(leaf)], k.capacity, k.nic_latency,
                  LinkKind::kNicCable);
    }
  build_fat_tree_above(t, p, leaves, k, c.inter_node, [&c](std::size_t leaf) {
    return share_of(c.inter_node.group_uplink_share, leaf);
  });
}

void build_rail_optimized(Topology& t, const TopologyPlan& p, const hw::ClusterSpec& c, const Cables& k) {
  const int nics = c.inter_node.nics_per_node;
  const int rails = c.inter_node.rail_groups();
  const int per_node = nics / rails;
  const int nodes_per_leaf = p.down_ports / per_node;
  std::vector<VertexId> leaves;
  // Leaves unit by unit (a unit: the nodes that share a leaf), rails inside a unit,
  // so a pod of a 3-tier tree holds whole units with all their rails.
  for (int l = 0; l < p.leaves; ++l)
    leaves.push_back(t.add_switch(1, fmt::format("rail{}.leaf{}", l % rails, l / rails), l / rails));
  for (int node = 0; node < c.num_nodes; ++node)
    for (int r = 0; r < nics; ++r) {
      const int rail = r / per_node;
      const int group = c.inter_node.node_groups.empty() ? node / nodes_per_leaf
                                                         : c.inter_node.node_groups[static_cast<std::size_t>(node)];
      const int leaf = group * rails + rail;
      t.add_cable(t.nic(node, r), leaves[static_cast<std::size_t>(leaf)], k.capacity, k.nic_latency,
                  LinkKind::kNicCable);
    }
  build_fat_tree_above(t, p, leaves, k, c.inter_node, [&c, rails](std::size_t leaf) {
    return share_of(c.inter_node.group_uplink_share, leaf / static_cast<std::size_t>(rails));
  });
}

void build_torus(Topology& t, const TopologyPlan& p, const hw::ClusterSpec& c, const Cables& k) {
  const int dims = static_cast<int>(p.dims.size());
  std::vector<VertexId> routers;
  for (int node = 0; node < c.num_nodes; ++node) routers.push_back(t.add_switch(1, fmt::format("router{}", node)));
  for (int node = 0; node < c.num_nodes; ++node)
    for (int r = 0; r < c.inter_node.nics_per_node; ++r)
      t.add_cable(t.nic(node, r), routers[static_cast<std::size_t>(node)], k.capacity, k.nic_latency,
                  LinkKind::kNicCable);
  // The node's NICs' worth of bandwidth spread over the 2 D torus ports.
  const double port = k.capacity * c.inter_node.nics_per_node / (2.0 * dims);
  for (int node = 0; node < c.num_nodes; ++node) {
    int stride = 1;
    for (int dim = 0; dim < dims; ++dim) {
      const int size = p.dims[static_cast<std::size_t>(dim)];
      const int coord = (node / stride) % size;
      if (size > 1) {
        const int next = node + (((coord + 1) % size) - coord) * stride;
        t.add_cable(routers[static_cast<std::size_t>(node)], routers[static_cast<std::size_t>(next)], port,
                    k.hop_latency, LinkKind::kFabric);
      }
      stride *= size;
    }
  }
}

void build_dragonfly(Topology& t, const TopologyPlan& p, const hw::ClusterSpec& c, const Cables& k) {
  const int a = p.routers_per_group;
  const int h = p.global_per_router;
  const int groups = p.groups;
  std::vector<VertexId> routers;
  for (int g = 0; g < groups; ++g)
    for (int r = 0; r < a; ++r) routers.push_back(t.add_switch(1, fmt::format("group{}.router{}", g, r)));
  auto router = [&](int g, int r) { return routers[static_cast<std::size_t>(g * a + r)]; };
  long long i = 0;
  for (int node = 0; node < c.num_nodes; ++node)
    for (int r = 0; r < c.inter_node.nics_per_node; ++r, ++i)
      t.add_cable(t.nic(node, r), routers[static_cast<std::size_t>(i / p.hosts_per_router)], k.capacity,
                  k.nic_latency, LinkKind::kNicCable);
  for (int g = 0; g < groups; ++g)
    for (int x = 0; x < a; ++x)
      for (int y = x + 1; y < a; ++y) t.add_cable(router(g, x), router(g, y), k.capacity, k.hop_latency, LinkKind::kFabric);
  if (groups < 2) return;
  // Global port q of group g leads to group (g + 1 + q mod (G-1)) mod G; its
  // partner port in that group leads back, in the same round q / (G-1).
  const int ports = a * h;
  for (int g = 0; g < groups; ++g)
    for (int q = 0; q < ports; ++q) {
      const int round = q / (groups - 1);
      const int target = (g + 1 + q % (groups - 1)) % groups;
      if (target < g) continue;
      const int back = round * (groups - 1) + (g - target - 1 + 2 * groups) % groups;
      if (back >= ports) continue;
      t.add_cable(router(g, q / h), router(target, back / h), k.capacity, k.hop_latency, LinkKind::kFabric);
    }
}

void build_custom(Topology& t, const hw::ClusterSpec& c) {
  std::map<std::string, VertexId> switches;
  auto vertex = [&](const hw::CableEnd& e) -> VertexId {
    if (e.nic) return t.nic(e.nic->node, e.nic->rail);
    auto [it, fresh] = switches.try_emplace(e.name, 0);
    if (fresh) it->second = t.add_switch(1, e.name);
    return it->second;
  };
  const double eff = c.inter_node.bandwidth_efficiency;
  for (const hw::CustomLink& l : c.inter_node.custom_links) {
    const VertexId a = vertex(l.a);
    const VertexId b = vertex(l.b);
    const bool nic_end = t.vertex(a).kind == VertexKind::kNic || t.vertex(b).kind == VertexKind::kNic;
    t.add_cable(a, b, l.bandwidth * eff, l.latency, nic_end ? LinkKind::kNicCable : LinkKind::kFabric);
  }
}

}  // namespace

namespace {

// A mixed cluster (hw::GpuPool): each pool's nodes get its own NVLink and NIC
// speeds; the algorithms' fabric figures are the slowest pool's (docs/model.md,
// "Heterogeneous jobs"): in-switch reduction only where every pool has it.
void apply_pools(Topology& t, const hw::ClusterSpec& c) {
  int node = 0;
  for (const hw::GpuPool& pool : c.pools) {
    const double nvlink = pool.intra_node.bandwidth * pool.intra_node.bandwidth_efficiency;
    const double nic = pool.nic_bandwidth * c.inter_node.bandwidth_efficiency;
    for (int n = node; n < node + pool.num_nodes && n < t.num_nodes(); ++n) {
      for (int g = 0; g < t.gpus_per_node(); ++g) {
        const long long rank = static_cast<long long>(n) * t.gpus_per_node() + g;
        if (nvlink > 0.0) t.set_capacity(t.gpu_up(rank), nvlink);
        if (nvlink > 0.0) t.set_capacity(t.gpu_down(rank), nvlink);
      }
      for (int r = 0; r < t.nics_per_node(); ++r) {
        t.set_capacity(t.host_out(n, r), pool.nic_bandwidth);
        t.set_capacity(t.host_in(n, r), pool.nic_bandwidth);
        if (!t.nic_connected(n, r)) continue;
        t.set_capacity(t.nic_uplink(n, r), nic);
        t.set_capacity(t.nic_downlink(n, r), nic);
      }
    }
    node += pool.num_nodes;
    const hw::IntraNodeFabric& f = pool.intra_node;
    t.in_switch_reduction = t.in_switch_reduction && f.fabric == "nvswitch" && f.nvls_efficiency > 0.0;
    t.nvls_rate = std::min(t.nvls_rate, f.bandwidth * f.nvls_efficiency);
    t.nvls_latency = std::max(t.nvls_latency, f.nvls_latency);
    t.nvls_loop_overhead = std::max(t.nvls_loop_overhead, f.nvls_loop_overhead);
    t.gather_scatter_startup = std::max(t.gather_scatter_startup, f.gather_scatter_startup);
    t.all_to_all_startup = std::max(t.all_to_all_startup, f.all_to_all_startup);
    const double a2a = f.all_to_all_efficiency > 0.0 ? f.bandwidth * f.all_to_all_efficiency : nvlink;
    t.all_to_all_rate = t.all_to_all_rate > 0.0 ? std::min(t.all_to_all_rate, a2a) : a2a;
  }
}

}  // namespace

Topology build_topology(const hw::ClusterSpec& cluster) {
  hw::ClusterSpec c = domain_view(cluster);
  // A mixed cluster's switches and their uplinks are sized for its fastest NICs;
  // each pool's own NIC cables are set after (apply_pools).
  for (const hw::GpuPool& pool : c.pools)
    c.inter_node.nic_bandwidth = std::max(c.inter_node.nic_bandwidth, pool.nic_bandwidth);
  const TopologyPlan p = plan_topology(cluster);
  const bool multi = c.num_nodes > 1;
  const int nics = multi ? c.inter_node.nics_per_node : 0;
  // A one-GPU node may have no NVLink figure: its GPU then reaches its NICs unhindered.
  double nvlink = c.nvlink_bandwidth();
  if (!(nvlink > 0.0)) nvlink = std::max(1.0, c.inter_node.nic_bandwidth * std::max(1, nics));
  // A mesh's `bandwidth` is one link's; the GPU's link to the node switch (its
  // NICs' side only) then carries all of its links' worth.
  const bool mesh = c.intra_node.fabric == "mesh" && c.gpus_per_node > 1;
  Topology t(c.num_nodes, c.gpus_per_node, nics, mesh ? nvlink * (c.gpus_per_node - 1) : nvlink,
             c.intra_node.latency, multi ? c.inter_node.nic_bandwidth : 1.0);
  if (mesh) t.add_mesh(nvlink, c.intra_node.latency);
  t.in_switch_reduction = c.intra_node.fabric == "nvswitch" && c.intra_node.nvls_efficiency > 0.0;
  t.nvls_rate = c.intra_node.bandwidth * c.intra_node.nvls_efficiency;
  t.nvls_latency = c.intra_node.nvls_latency;
  t.nvls_loop_overhead = c.intra_node.nvls_loop_overhead;
  t.ring_buffer = c.intra_node.ring_buffer;
  t.gather_scatter_startup = c.intra_node.gather_scatter_startup;
  t.all_to_all_rate = c.intra_node.bandwidth * c.intra_node.all_to_all_efficiency;
  t.all_to_all_startup = c.intra_node.all_to_all_startup;
  t.description = p.description;
  if (!multi) return t;  // a mixed cluster has a node per pool at least
  // One network step between GPUs of two nodes under one leaf costs `latency`;
  // the NIC cables carry what the NVLink half-steps do not.
  const Cables k{c.inter_node.nic_bandwidth * c.inter_node.bandwidth_efficiency,
                 std::max(0.0, c.inter_node.latency - c.intra_node.latency) / 2.0, c.inter_node.switch_latency};
  const std::string& kind = c.inter_node.topology;
  if (kind == "fat_tree") build_fat_tree(t, p, c, k);
  else if (kind == "rail_optimized") build_rail_optimized(t, p, c, k);
  else if (kind == "torus2d" || kind == "torus3d") build_torus(t, p, c, k);
  else if (kind == "dragonfly") build_dragonfly(t, p, c, k);
  else build_custom(t, c);
  if (c.heterogeneous()) apply_pools(t, c);
  return t;
}

}  // namespace trainsim::net
