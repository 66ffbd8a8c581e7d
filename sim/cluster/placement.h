#pragma once
// Where a job's GPUs go on a shared cluster (docs/cluster.md, "Placement"). Nodes
// sit in leaf groups (a fat tree's leaf, or the `rails` leaves of a rail-optimized
// node group) and groups in pods (a 3-tier tree's); a job of a node or more takes
// whole free nodes (gang placement, as Slurm's exclusive nodes), a smaller one
// shares a node's GPUs.
//  - topology-aware: the fewest groups, inside one pod when one can hold the job
//    (best fit: the fullest group or pod that still fits, then the lowest index);
//    a small job on the partly used node with the fewest free GPUs that fit;
//  - blind: free nodes in a seeded random order, names that say nothing of where
//    a node sits.
#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "config/cluster_workload.h"
#include "hardware/cluster.h"

namespace trainsim::cluster {

// How the nodes are grouped under the network.
struct FabricShape {
  int nodes = 0;
  int gpus_per_node = 0;
  int nodes_per_group = 1;  // nodes under one leaf (fat tree) or one rail group
  int groups_per_pod = 1;   // a pod's groups; all of them below three tiers
  int tiers = 1;
  [[nodiscard]] int group_of(int node) const { return node / nodes_per_group; }
  [[nodiscard]] int pod_of(int node) const { return group_of(node) / groups_per_pod; }
  [[nodiscard]] int groups() const { return (nodes + nodes_per_group - 1) / nodes_per_group; }
};

// From the cluster's network plan (network/topology_builders.h).
FabricShape fabric_shape(const hw::ClusterSpec& c);

struct Placement {
  std::vector<int> nodes;  // ascending
  int gpus_per_node = 0;   // GPUs the job takes on each of its nodes
  [[nodiscard]] long long gpus() const { return static_cast<long long>(nodes.size()) * gpus_per_node; }
};

// The free GPUs of every node.
class NodeState {
 public:
  NodeState(const FabricShape& shape, config::PlacementPolicy policy, std::uint64_t seed);

  // Where `gpus` GPUs would go now; none when they do not fit.
  [[nodiscard]] std::optional<Placement> place(int gpus) const;
  void take(const Placement& p);
  void give_back(const Placement& p);
  // A node out of service (its GPUs all free before) and back.
  void fail(int node);
  void repair(int node);
  [[nodiscard]] bool down(int node) const { return down_[static_cast<std::size_t>(node)]; }
  [[nodiscard]] long long free_gpus() const { return free_gpus_; }
  [[nodiscard]] const FabricShape& shape() const { return shape_; }

 private:
  [[nodiscard]] std::optional<Placement> place_small(int gpus) const;
  [[nodiscard]] std::optional<Placement> place_nodes(int count) const;
  [[nodiscard]] std::vector<int> aware_nodes(int count) const;
  [[nodiscard]] bool node_free(int n) const { return free_[static_cast<std::size_t>(n)] == shape_.gpus_per_node; }

  FabricShape shape_;
  config::PlacementPolicy policy_;
  std::vector<int> free_;   // per node
  std::vector<int> order_;  // the blind policy's node order
  std::vector<bool> down_;  // per node
  long long free_gpus_ = 0;
};

// The job's view of its nodes (hw::InterNodeNetwork::node_groups): each node's
// group renumbered as pod' x groups_per_pod + slot, pods and groups in the order
// of the nodes they hold (most first, then the lowest index), listed group by
// group, so placements of the same shape share one view (and one simulation).
// Empty for a job on one node, or on a one-switch network.
struct JobView {
  std::vector<int> node_groups;
  std::map<int, int> group_of_view;  // view group -> the cluster's group
  std::map<int, int> pod_of_view;    // view pod -> the cluster's pod (3-tier trees)
};
JobView view_of(const FabricShape& shape, const Placement& p);
inline std::vector<int> job_view(const FabricShape& shape, const Placement& p) {
  return view_of(shape, p).node_groups;
}

}  // namespace trainsim::cluster
