#pragma once
// Routes between GPUs on a Topology: shortest paths (fewest switch hops) with
// deterministic ECMP. At every switch the next hop is one of the neighbors one
// hop nearer the destination, picked by a hash of (flow key, switch), so one
// flow keeps one path and different flows spread over the equal-cost ones, as
// switches hashing packet headers do. Distances come from a breadth-first search
// over the switch graph (read from the topology's Boost.Graph), one per
// destination switch, cached.
//
// Or, with Routing::kDModK, deterministically by destination as InfiniBand subnet
// managers route fat trees (OpenSM's ftree, "D-mod-K"; Zahavi et al., "Optimized
// InfiniBand fat-tree routing for shift all-to-all communication patterns", 2010):
// the i-th choice among `c_i` equal-cost next hops is (d / (c_1 ... c_{i-1})) mod c_i,
// with d the destination NIC's global index (node x NICs per node + NIC), so the
// hosts of a leaf reach it through distinct spines and ring and shift patterns meet
// no contention above the leaves.
//
// Inside a node a path is GPU -> node switch -> GPU. Between nodes it is
// GPU -> node switch -> NIC -> switches -> NIC -> node switch -> GPU, leaving and
// entering on the same rail (NIC index), as NCCL keeps a ring or tree on one rail.
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "network/topology.h"

namespace trainsim::net {

enum class Routing { kEcmp, kDModK };
// "ecmp" or "d_mod_k" (InterNodeNetwork::routing); throws std::invalid_argument otherwise.
[[nodiscard]] Routing routing_of(const std::string& name);

class Router {
 public:
  explicit Router(const Topology& topology, Routing routing = Routing::kEcmp);

  // Appends to `out` the links from GPU `src` to GPU `dst` (global ranks). `rail`
  // is the NIC used on both nodes (< 0: the destination GPU's own NIC); `key`
  // selects among equal-cost paths.
  void route(long long src, long long dst, int rail, std::uint64_t key, std::vector<std::uint32_t>& out) const;
  // Sum of the link latencies of a path.
  [[nodiscard]] double latency(std::span<const std::uint32_t> path) const;
  [[nodiscard]] const Topology& topology() const { return topology_; }
  // Switch hops from switch a to switch b (indices among switches).
  [[nodiscard]] int switch_distance(int a, int b) const;

 private:
  const std::vector<std::uint16_t>& distances_to(int dest_switch) const;

  const Topology& topology_;
  Routing routing_ = Routing::kEcmp;
  // The switch graph in compressed rows: out-links of switch s are
  // adj_[offset_[s] .. offset_[s+1]) as (neighbor switch, link id).
  std::vector<std::uint32_t> offset_;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> adj_;
  mutable std::vector<std::vector<std::uint16_t>> distance_;  // per destination switch; empty until needed
};

}  // namespace trainsim::net
