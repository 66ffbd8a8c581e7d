#pragma once
// Clusters with round figures for hand-derived network tests: NVLink 400 GB/s,
// NICs 50 GB/s, every efficiency 1, 2 us per step inside a node, 10 us between.
#include <optional>
#include <string>
#include <utility>

#include "hardware/cluster.h"

namespace trainsim::testing {

inline hw::ClusterSpec round_cluster(int nodes, int gpus_per_node, int nics_per_node,
                                     const char* topology = "fat_tree", int radix = 64) {
  hw::ClusterSpec c;
  c.gpu.name = "test GPU";
  c.num_nodes = nodes;
  c.gpus_per_node = gpus_per_node;
  c.intra_node.bandwidth = 400e9;
  c.intra_node.latency = 2e-6;
  c.intra_node.bandwidth_efficiency = 1.0;
  c.inter_node.topology = topology;
  c.inter_node.nics_per_node = nics_per_node;
  c.inter_node.nic_bandwidth = 50e9;
  c.inter_node.latency = 10e-6;
  c.inter_node.bandwidth_efficiency = 1.0;
  c.inter_node.switch_radix = radix;
  return c;
}

// A custom cable's ends, as the scenario reader types "node<N>.nic<R>" and switch names.
inline hw::CableEnd nic_end(int node, int rail) {
  return {"node" + std::to_string(node) + ".nic" + std::to_string(rail), hw::NicId{node, rail}};
}
inline hw::CableEnd switch_end(std::string name) { return {std::move(name), std::nullopt}; }

}  // namespace trainsim::testing
