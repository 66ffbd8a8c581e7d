// Topology builders and routing: sizes from the fat-tree rules, link figures,
// path shapes and latencies, ECMP spreading (docs/model.md, "Topologies").
#include <gtest/gtest.h>

#include <set>

#include "network/routing.h"
#include "network/topology_builders.h"
#include "network_fixtures.h"

namespace trainsim::net {
namespace {

using testing::nic_end;
using testing::round_cluster;
using testing::switch_end;

TEST(Topology, NodeLinksCarryTheNvlinkFiguresAndHalfAStepEach) {
  const Topology t = build_topology(round_cluster(1, 8, 8));
  EXPECT_EQ(t.num_gpus(), 8);
  EXPECT_EQ(t.nics_per_node(), 0);  // one node needs no network
  const LinkView up = t.link(t.gpu_up(3));
  EXPECT_EQ(up.from, t.gpu(3));
  EXPECT_EQ(up.to, t.node_switch(0));
  EXPECT_DOUBLE_EQ(up.capacity, 400e9);
  EXPECT_DOUBLE_EQ(up.latency, 1e-6);
  const Router r(t);
  std::vector<std::uint32_t> path;
  r.route(2, 5, -1, 0, path);
  EXPECT_EQ(path, (std::vector<std::uint32_t>{t.gpu_up(2), t.gpu_down(5)}));
  EXPECT_DOUBLE_EQ(r.latency(path), 2e-6);
}

TEST(Topology, FatTreeTiersFollowTheRadix) {
  // 16 NICs fit one radix-64 switch; 128 NICs need 4 leaves of 32 down ports
  // under 32 spines; 8192 NICs need 256 leaves: 8 pods, 256 aggregation and
  // 32 x 32 = 1024 core switches.
  EXPECT_EQ(plan_topology(round_cluster(2, 8, 8)).tiers, 1);
  const TopologyPlan two = plan_topology(round_cluster(16, 8, 8));
  EXPECT_EQ(two.tiers, 2);
  EXPECT_EQ(two.leaves, 4);
  EXPECT_EQ(two.spines, 32);
  const TopologyPlan three = plan_topology(round_cluster(1024, 8, 8));
  EXPECT_EQ(three.tiers, 3);
  EXPECT_EQ(three.leaves, 256);
  EXPECT_EQ(three.pods, 8);
  EXPECT_EQ(three.spines, 256);
  EXPECT_EQ(three.cores, 1024);
  const Topology t = build_topology(round_cluster(16, 8, 8));
  EXPECT_EQ(t.num_switches(), 4 + 32);
  // 128 GPU cables, 128 host cables, 128 NIC cables, 4 x 32 leaf-spine cables.
  EXPECT_EQ(t.num_links(), 2u * (128 + 128 + 128 + 128));
}

TEST(Topology, AClusterTooLargeForThreeTiersNamesTheRadix) {
  try {
    (void)plan_topology(round_cluster(2000, 8, 8, "fat_tree", 32));  // 16000 NICs > 32^3/4
    FAIL() << "expected a TopologyError";
  } catch (const TopologyError& e) {
    EXPECT_EQ(e.field(), "inter_node/switch_radix");
  }
}

TEST(Topology, OversubscriptionTapersLeafUplinks) {
  hw::ClusterSpec c = round_cluster(16, 8, 8);
  c.inter_node.oversubscription = 4.0;
  const Topology t = build_topology(c);
  int uplinks = 0;
  for (std::uint32_t l = 0; l < t.num_links(); ++l) {
    const LinkView v = t.link(l);
    if (v.kind != LinkKind::kFabric) continue;
    ++uplinks;
    EXPECT_DOUBLE_EQ(v.capacity, 12.5e9);
  }
  EXPECT_EQ(uplinks, 2 * 4 * 32);
}

TEST(Routing, PathsThroughOneLeafOrThroughASpine) {
  hw::ClusterSpec c = round_cluster(16, 8, 8);
  c.inter_node.switch_latency = 0.5e-6;
  const Topology t = build_topology(c);
  const Router r(t);
  std::vector<std::uint32_t> path;
  // Nodes 0 and 1 share leaf 0 (NICs 0..31 = nodes 0..3): 6 links, 10 us.
  r.route(0, 8, -1, 0, path);
  EXPECT_EQ(path.size(), 6u);
  EXPECT_DOUBLE_EQ(r.latency(path), 10e-6);
  // Node 4 is on leaf 1: up to a spine and down, 2 more links and 2 switch hops.
  path.clear();
  r.route(0, 32, -1, 0, path);
  EXPECT_EQ(path.size(), 8u);
  EXPECT_NEAR(r.latency(path), 11e-6, 1e-18);
  // The destination GPU's NIC: GPU 3 of node 4 is reached on rail 3 both ends.
  path.clear();
  r.route(0, 35, -1, 0, path);
  EXPECT_EQ(path[1], t.host_out(0, 3));
  EXPECT_EQ(path[path.size() - 2], t.host_in(4, 3));
}

TEST(Routing, EcmpIsDeterministicAndSpreadsOverEverySpine) {
  const Topology t = build_topology(round_cluster(16, 8, 8));
  const Router r(t);
  std::set<std::uint32_t> spines_used;
  for (std::uint64_t key = 0; key < 2000; ++key) {
    std::vector<std::uint32_t> a;
    std::vector<std::uint32_t> b;
    r.route(0, 32, 0, key, a);
    r.route(0, 32, 0, key, b);
    ASSERT_EQ(a, b);
    spines_used.insert(a[3]);  // leaf -> spine
  }
  EXPECT_EQ(spines_used.size(), 32u);
}

TEST(Routing, DModKGivesEveryHostOfALeafItsOwnSpine) {
  // 16 nodes x 8 NICs, radix 64: leaves of 32 NICs (nodes 0-3, 4-7, ...), 32 spines.
  // D-mod-K (routing.h) leaves a leaf through spine d mod 32 for destination NIC d: the
  // 32 NICs of leaf 1 (nodes 4-7, d = 32..63) are reached through 32 distinct spines,
  // whatever the flow key, so the rings of a data-parallel group (node 3 -> node 4 on
  // each of the 8 rails) cross leaves on 8 distinct links. Hashing (ECMP) may not.
  hw::ClusterSpec c = round_cluster(16, 8, 8);
  c.inter_node.routing = "d_mod_k";
  const Topology t = build_topology(c);
  const Router r(t, routing_of(c.inter_node.routing));
  std::set<std::uint32_t> uplinks;
  for (int node = 4; node < 8; ++node)
    for (int nic = 0; nic < 8; ++nic) {
      std::vector<std::uint32_t> a;
      std::vector<std::uint32_t> b;
      r.route(nic, static_cast<long long>(node) * 8 + nic, nic, 0, a);
      r.route(nic, static_cast<long long>(node) * 8 + nic, nic, 987654321, b);
      ASSERT_EQ(a, b);
      uplinks.insert(a[3]);  // leaf -> spine
    }
  EXPECT_EQ(uplinks.size(), 32u);
  std::set<std::uint32_t> ring;
  for (int nic = 0; nic < 8; ++nic) {
    std::vector<std::uint32_t> path;
    r.route(3LL * 8 + nic, 4LL * 8 + nic, nic, static_cast<std::uint64_t>(nic), path);
    ring.insert(path[3]);
  }
  EXPECT_EQ(ring.size(), 8u);
  EXPECT_THROW((void)routing_of("adaptive"), std::invalid_argument);
}

TEST(Topology, RailOptimizedPutsRailROnRailLeaves) {
  // 64 nodes, 8 rails, 32 nodes per leaf: 2 leaves per rail, 16 leaves, 2 tiers.
  const Topology t = build_topology(round_cluster(64, 8, 8, "rail_optimized"));
  EXPECT_EQ(t.vertex_name(t.nic_switch(5, 3)), "rail3.leaf0");
  EXPECT_EQ(t.vertex_name(t.nic_switch(40, 3)), "rail3.leaf1");
  EXPECT_EQ(t.nic_switch(5, 3), t.nic_switch(31, 3));
  EXPECT_NE(t.nic_switch(5, 3), t.nic_switch(5, 4));
  EXPECT_EQ(plan_topology(round_cluster(64, 8, 8, "rail_optimized")).tiers, 2);
}

TEST(Topology, TorusDimensionsAreAsCubicAsPossible) {
  EXPECT_EQ(torus_dimensions(64, 3), (std::vector<int>{4, 4, 4}));
  EXPECT_EQ(torus_dimensions(64, 2), (std::vector<int>{8, 8}));
  EXPECT_EQ(torus_dimensions(12, 2), (std::vector<int>{4, 3}));
  EXPECT_EQ(torus_dimensions(7, 3), (std::vector<int>{7, 1, 1}));
}

TEST(Topology, TorusLinksShareTheNodesNicsAndRouteByManhattanDistance) {
  const Topology t = build_topology(round_cluster(64, 8, 8, "torus3d"));
  int torus_links = 0;
  for (std::uint32_t l = 0; l < t.num_links(); ++l)
    if (t.link(l).kind == LinkKind::kFabric) {
      ++torus_links;
      EXPECT_DOUBLE_EQ(t.link(l).capacity, 50e9 * 8 / 6);
    }
  EXPECT_EQ(torus_links, 2 * 3 * 64);  // one cable per router per dimension
  const Router r(t);
  // Node 42 sits at (2, 2, 2): 2 hops in each dimension of a ring of 4.
  EXPECT_EQ(r.switch_distance(0, 42), 6);
  EXPECT_EQ(r.switch_distance(0, 3), 1);  // wraparound
}

TEST(Topology, DragonflyGroupsAreAtMostThreeHopsApart) {
  // Radix 16: 4 NICs, 4 global links per router, 8 routers per group; 512 NICs
  // make 16 groups of 32 NICs (at most 8 x 4 + 1 = 33 groups).
  const hw::ClusterSpec c = round_cluster(64, 8, 8, "dragonfly", 16);
  const TopologyPlan p = plan_topology(c);
  EXPECT_EQ(p.routers_per_group, 8);
  EXPECT_EQ(p.groups, 16);
  const Topology t = build_topology(c);
  const Router r(t);
  for (int a = 0; a < t.num_switches(); a += 7)
    for (int b = 0; b < t.num_switches(); ++b) {
      const int d = r.switch_distance(a, b);
      ASSERT_GE(d, 0);
      ASSERT_LE(d, 3) << a << " -> " << b;
    }
  EXPECT_THROW((void)plan_topology(round_cluster(200, 8, 8, "dragonfly", 16)), TopologyError);
}

TEST(Topology, CustomEdgeListNeedsACableForEveryNic) {
  hw::ClusterSpec c = round_cluster(2, 1, 1, "custom");
  c.inter_node.custom_links = {{nic_end(0, 0), switch_end("sw"), 50e9, 1e-6},
                               {nic_end(1, 0), switch_end("sw"), 25e9, 1e-6}};
  const Topology t = build_topology(c);
  const Router r(t);
  std::vector<std::uint32_t> path;
  r.route(0, 1, -1, 0, path);
  EXPECT_EQ(path.size(), 6u);
  EXPECT_DOUBLE_EQ(t.link(t.nic_uplink(1, 0)).capacity, 25e9);
  c.inter_node.custom_links.pop_back();
  try {
    (void)build_topology(c);
    FAIL() << "expected a TopologyError";
  } catch (const TopologyError& e) {
    EXPECT_EQ(e.field(), "inter_node/links");
    EXPECT_NE(std::string(e.what()).find("node1.nic0"), std::string::npos);
  }
  c.inter_node.custom_links = {{nic_end(0, 0), switch_end("sw"), 50e9, 0.0},
                               {nic_end(7, 0), switch_end("sw"), 50e9, 0.0}};
  EXPECT_THROW((void)build_topology(c), TopologyError);
}

TEST(Topology, CustomCablesMayNameTheSwitchFirst) {
  // A cable is the same whichever end comes first: the NIC's downlink is the
  // other direction of its uplink (it was uplink + 1, off the end of the link
  // list when the last cable named its switch first).
  hw::ClusterSpec c = round_cluster(2, 1, 1, "custom");
  c.inter_node.custom_links = {{switch_end("sw"), nic_end(1, 0), 25e9, 1e-6},
                               {switch_end("sw"), nic_end(0, 0), 50e9, 1e-6}};
  const Topology t = build_topology(c);
  for (int node = 0; node < 2; ++node) {
    const LinkView up = t.link(t.nic_uplink(node, 0));
    const LinkView down = t.link(t.nic_downlink(node, 0));
    EXPECT_EQ(up.from, t.nic(node, 0));
    EXPECT_EQ(down.to, t.nic(node, 0));
    EXPECT_EQ(up.to, down.from);
  }
  const Router r(t);
  std::vector<std::uint32_t> path;
  r.route(0, 1, -1, 0, path);
  ASSERT_EQ(path.size(), 6u);
  EXPECT_EQ(path[3], t.nic_downlink(1, 0));
  EXPECT_DOUBLE_EQ(t.link(path[3]).capacity, 25e9);
}

}  // namespace
}  // namespace trainsim::net
