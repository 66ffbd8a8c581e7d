#pragma once
// Builders of the usual fabrics (docs/model.md, "Topologies"):
//  - the node: GPUs on an NVSwitch (or PCIe switch) with the GPU preset's link figures;
//  - fat_tree: 1, 2 or 3 switch tiers (folded Clos, Al-Fares et al. SIGCOMM 2008)
//    with `oversubscription` as leaf downlink : uplink bandwidth;
//  - rail_optimized: NIC r of every node on the leaves of rail r, then a fat tree
//    over the leaves (NVIDIA DGX SuperPOD reference architecture);
//  - torus2d / torus3d: one router per node, neighbors in every dimension, wraparound;
//  - dragonfly: groups of routers joined all-to-all, groups joined by global links
//    (Kim, Dally, Scott & Abts, ISCA 2008; balanced a = 2p = 2h);
//  - custom: a JSON edge list of switches and NICs.
#include <stdexcept>
#include <string>
#include <vector>

#include "hardware/cluster.h"
#include "network/topology.h"

namespace trainsim::net {

// A layout the builders cannot make; `field` is the key under "cluster" at fault
// (e.g. "inter_node/switch_radix"), so the scenario reader can name it.
class TopologyError : public std::invalid_argument {
 public:
  TopologyError(std::string field, const std::string& what) : std::invalid_argument(what), field_(std::move(field)) {}
  [[nodiscard]] const std::string& field() const { return field_; }

 private:
  std::string field_;
};

// The sizes a builder will use; cheap, so the scenario reader checks with it.
struct TopologyPlan {
  std::string kind;  // "single_node", or the inter_node topology
  int tiers = 0;     // fat trees
  int leaves = 0;
  int spines = 0;     // 2 tiers: spines; 3 tiers: aggregation switches
  int cores = 0;
  int pods = 0;
  int down_ports = 0;  // NIC-facing ports of a leaf
  std::vector<int> dims;  // torus
  int routers_per_group = 0, hosts_per_router = 0, global_per_router = 0, groups = 0;  // dragonfly
  std::string description;
};

// Both see the cluster as its scale-up domains (domain_view): a topology's node
// is a domain of `gpus_per_domain()` GPUs on one intra-node fabric with all its
// servers' NICs, rail r of a domain being NIC r of each of its servers.
TopologyPlan plan_topology(const hw::ClusterSpec& cluster);
Topology build_topology(const hw::ClusterSpec& cluster);

// The cluster with its scale-up domains as nodes (docs/model.md, "Scale-up
// domains"): num_nodes domains of gpus_per_domain() GPUs and nics_per_domain()
// NICs, one node per domain. Rails default to a server's NICs.
hw::ClusterSpec domain_view(const hw::ClusterSpec& cluster);

// Nodes per dimension: the most nearly cubic factorization of `nodes` into `d` factors.
std::vector<int> torus_dimensions(int nodes, int d);

}  // namespace trainsim::net
