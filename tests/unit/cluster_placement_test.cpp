// Where a shared cluster puts a job (docs/cluster.md, "Placement"), and the job's
// view of its nodes that its simulation builds its network from.
#include <gtest/gtest.h>

#include <set>

#include "cluster/placement.h"
#include "network/topology_builders.h"

namespace trainsim::cluster {
namespace {

// 16 leaves of 4 nodes (8 NICs a node, radix 64: 32 NIC ports a leaf), 2 tiers.
hw::ClusterSpec two_tier(int nodes = 64) {
  hw::ClusterSpec c;
  c.num_nodes = nodes;
  c.gpus_per_node = 8;
  c.inter_node.nics_per_node = 8;
  c.inter_node.switch_radix = 64;
  c.inter_node.nic_bandwidth = 50e9;
  return c;
}

TEST(ClusterPlacement, FabricShapeFromTheNetworkPlan) {
  const FabricShape s = fabric_shape(two_tier());
  EXPECT_EQ(s.tiers, 2);
  EXPECT_EQ(s.nodes_per_group, 4);
  EXPECT_EQ(s.groups(), 16);
  EXPECT_EQ(s.pod_of(63), 0);
  // Radix 16: a leaf holds one 8-NIC node, a pod 8 leaves; 64 leaves need 3 tiers.
  hw::ClusterSpec c = two_tier();
  c.inter_node.switch_radix = 16;
  const FabricShape t = fabric_shape(c);
  EXPECT_EQ(t.tiers, 3);
  EXPECT_EQ(t.nodes_per_group, 1);
  EXPECT_EQ(t.groups_per_pod, 8);
  EXPECT_EQ(t.pod_of(17), 2);
}

TEST(ClusterPlacement, TopologyAwareTakesTheFewestLeaves) {
  NodeState state(fabric_shape(two_tier(16)), config::PlacementPolicy::kTopologyAware, 1);
  // 3 nodes fit one leaf: the first.
  const Placement a = *state.place(24);
  EXPECT_EQ(a.nodes, (std::vector<int>{0, 1, 2}));
  state.take(a);
  // 2 nodes: leaf 0 has one free node left, leaves 1-3 four each; the best fit is leaf 1.
  const Placement b = *state.place(16);
  EXPECT_EQ(b.nodes, (std::vector<int>{4, 5}));
  state.take(b);
  // 6 nodes fit no leaf: the most free first (leaf 2: 4, leaf 3: 4 -> 4 + 2 nodes).
  const Placement c = *state.place(48);
  EXPECT_EQ(c.nodes, (std::vector<int>{8, 9, 10, 11, 12, 13}));
  EXPECT_EQ(job_view(state.shape(), c), (std::vector<int>{0, 0, 0, 0, 1, 1}));
}

TEST(ClusterPlacement, SmallJobsShareTheFullestNodeThatFits) {
  NodeState state(fabric_shape(two_tier(4)), config::PlacementPolicy::kTopologyAware, 1);
  const Placement a = *state.place(6);
  EXPECT_EQ(a.nodes, std::vector<int>{0});
  EXPECT_EQ(a.gpus_per_node, 6);
  state.take(a);
  // 2 GPUs: node 0 has exactly 2 left.
  EXPECT_EQ(state.place(2)->nodes, std::vector<int>{0});
  // 3 GPUs: node 0 has 2, node 1 a whole 8.
  EXPECT_EQ(state.place(3)->nodes, std::vector<int>{1});
  // A whole-node job never shares.
  EXPECT_EQ(state.place(8)->nodes, std::vector<int>{1});
  EXPECT_EQ(state.place(32), std::nullopt);
}

TEST(ClusterPlacement, BlindTakesASeededOrder) {
  const FabricShape shape = fabric_shape(two_tier());
  const NodeState a(shape, config::PlacementPolicy::kBlind, 7);
  const NodeState b(shape, config::PlacementPolicy::kBlind, 7);
  const Placement p = *a.place(64);
  EXPECT_EQ(p.nodes, b.place(64)->nodes);  // the same seed, the same nodes
  EXPECT_EQ(p.nodes.size(), 8u);
  // Scattered: 8 nodes over more than the 2 leaves a packed job takes.
  const std::vector<int> view = job_view(shape, p);
  EXPECT_GT(std::set<int>(view.begin(), view.end()).size(), 2u);
}

TEST(ClusterPlacement, JobViewKeepsPodsAndOrdersGroupsByTheirNodes) {
  hw::ClusterSpec c = two_tier();
  c.inter_node.switch_radix = 16;  // one node a leaf, 8 leaves a pod
  const FabricShape shape = fabric_shape(c);
  // One node in pod 0 (node 3), three in pod 2 (nodes 16, 17, 23): pod 2 first.
  const Placement p{{3, 16, 17, 23}, 8};
  EXPECT_EQ(job_view(shape, p), (std::vector<int>{0, 1, 2, 8}));
  // A job on one node, or on one switch, has no view.
  EXPECT_TRUE(job_view(shape, Placement{{5}, 8}).empty());
}

TEST(ClusterPlacement, NetworkBuiltFromTheView) {
  hw::ClusterSpec c = two_tier(4);
  c.inter_node.tiers = 2;
  c.inter_node.node_groups = {0, 0, 1, 1};
  const net::TopologyPlan p = net::plan_topology(c);
  EXPECT_EQ(p.tiers, 2);
  EXPECT_EQ(p.leaves, 2);
  c.inter_node.node_groups = {0, 0, 0, 0};
  EXPECT_EQ(net::plan_topology(c).tiers, 1);
  c.inter_node.node_groups = {0, 0, 1};
  EXPECT_THROW(net::plan_topology(c), net::TopologyError);
}

}  // namespace
}  // namespace trainsim::cluster
