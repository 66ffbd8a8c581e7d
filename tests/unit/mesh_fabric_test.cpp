// Mesh fabrics (docs/model.md, "Mesh fabrics"): a direct link between every two
// GPUs of a node, as AMD's Infinity Fabric joins 8 MI300X. Closed forms on the
// round figures of network_fixtures.h, with 50 GB/s per mesh link, 2 us per step
// inside a node, NICs of 50 GB/s and 10 us between nodes.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <utility>

#include "network/collective_engine.h"
#include "network/topology_builders.h"
#include "network_fixtures.h"

namespace trainsim::net {
namespace {

constexpr double kS = 1e9;                   // bytes
constexpr double kLink = 50e9;               // B/s per mesh link and direction
constexpr double kBuffer = 4.0 * 1024 * 1024;  // B, the ring buffer

core::Time ns(double seconds) { return static_cast<core::Time>(seconds * 1e9 + 0.5); }

hw::ClusterSpec mesh_cluster(int nodes, int nics) {
  hw::ClusterSpec c = testing::round_cluster(nodes, 8, nics);
  c.intra_node.fabric = "mesh";
  c.intra_node.bandwidth = kLink;
  return c;
}

core::Time flow_time(CollectivePlanner& planner, const Collective& c) {
  FlowBackend flow(planner);
  core::Simulator sim;
  core::Time done = 0;
  flow.start(c, sim, [&] { done = sim.now(); });
  sim.run();
  return done;
}

Collective all_reduce(int nodes, int per_node, double bytes = kS) {
  return {CollectiveKind::kAllReduce, bytes, {nodes * per_node, nodes, per_node, nullptr}};
}

TEST(MeshFabric, EveryTwoGpusOfANodeHaveTheirOwnLink) {
  const Topology t = build_topology(mesh_cluster(1, 0));
  EXPECT_TRUE(t.mesh());
  std::set<std::uint32_t> links;
  for (long long i = 0; i < 8; ++i)
    for (long long j = 0; j < 8; ++j) {
      if (i == j) continue;
      const std::uint32_t l = t.mesh_link(i, j);
      EXPECT_DOUBLE_EQ(t.link(l).capacity, kLink);
      links.insert(l);
    }
  EXPECT_EQ(links.size(), 56U);  // 28 cables, both directions
}

TEST(MeshFabric, RingOverTheWholeNodeLoadsAllSevenLinksOfAGpu) {
  // 2(n-1)/n S = 1.75 GB leaves each GPU over its 7 links, 250 MB on each: 5 ms at
  // 50 GB/s; 14 steps of 2 us; 13 ring-buffer fills at the GPU's 7 x 50 GB/s.
  const Topology t = build_topology(mesh_cluster(1, 0));
  CollectivePlanner p(t, Algorithm::kRing);
  const core::Time expected = ns(28e-6 + 5e-3 + 13 * kBuffer / 350e9);
  EXPECT_EQ(p.plan(all_reduce(1, 8)).duration(kS), expected);
  EXPECT_EQ(flow_time(p, all_reduce(1, 8)), expected);
}

TEST(MeshFabric, APairOfGpusHasOneLink) {
  // A tensor-parallel pair: 2(2-1)/2 S = 1 GB over its one link, 20 ms, where a
  // switch would give each GPU all 7 links' worth (2.86 ms).
  const Topology t = build_topology(mesh_cluster(1, 0));
  CollectivePlanner p(t, Algorithm::kRing);
  const Collective pair{CollectiveKind::kAllReduce, kS, {2, 1, 2, nullptr}};
  const core::Time expected = ns(4e-6 + 20e-3 + kBuffer / 50e9);
  EXPECT_EQ(p.plan(pair).duration(kS), expected);
  EXPECT_EQ(flow_time(p, pair), expected);
}

TEST(MeshFabric, WaleckiPathsGiveEachChannelItsOwnLinksAcrossNodes) {
  // 2 nodes of 8 with 8 NICs: 8 channels of 2 x 15/16 S / 8 = 234.4 MB each.
  // Their paths through a node share no mesh link and each crosses on its own NIC,
  // so every link carries one channel: 4.6875 ms at 50 GB/s, after 2 x 15 steps
  // of the slowest (network, 10 us) path.
  const Topology t = build_topology(mesh_cluster(2, 8));
  CollectivePlanner p(t, Algorithm::kRing);
  const core::Time expected = ns(300e-6 + 2.0 * 15.0 / 16.0 * kS / 8.0 / kLink);
  EXPECT_EQ(p.plan(all_reduce(2, 8)).duration(kS), expected);
  EXPECT_EQ(flow_time(p, all_reduce(2, 8)), expected);
}

TEST(MeshFabric, FourNicsTakeEveryOtherWaleckiPath) {
  // 4 channels over 2 nodes of 8: paths 0, 2, 4, 6 share no link and leave from
  // GPUs 0, 2, 4, 6 (4 distinct NICs): each link one channel's 2 x 15/16 S / 4.
  const Topology t = build_topology(mesh_cluster(2, 4));
  CollectivePlanner p(t, Algorithm::kRing);
  const core::Time expected = ns(300e-6 + 2.0 * 15.0 / 16.0 * kS / 4.0 / kLink);
  EXPECT_EQ(p.plan(all_reduce(2, 8)).duration(kS), expected);
  EXPECT_EQ(flow_time(p, all_reduce(2, 8)), expected);
}

TEST(MeshFabric, BroadcastRunsAChainPerStrideCoprimeWithTheNode) {
  // Strides 1, 3, 5, 7: four chains of 7 steps from the root, S / 4 each on links
  // of its own: 250 MB at 50 GB/s = 5 ms, after 7 steps of 2 us.
  const Topology t = build_topology(mesh_cluster(1, 0));
  CollectivePlanner p(t, Algorithm::kRing);
  const Collective b{CollectiveKind::kBroadcast, kS, {8, 1, 8, nullptr}};
  EXPECT_EQ(p.plan(b).duration(kS), ns(14e-6 + 5e-3));
  EXPECT_EQ(flow_time(p, b), ns(14e-6 + 5e-3));
}

}  // namespace
}  // namespace trainsim::net
