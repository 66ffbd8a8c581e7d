// Collective algorithms at both fidelities against their closed forms
// (docs/model.md, "Collective algorithms"), on the round-figure clusters of
// network_fixtures.h: NVLink B = 400 GB/s, NICs 50 GB/s, alpha = 2 us inside a
// node and 10 us between nodes.
#include <gtest/gtest.h>

#include <functional>
#include <memory>

#include "core/simulator.h"
#include "network/collective_engine.h"
#include "network/topology_builders.h"
#include "network_fixtures.h"

namespace trainsim::net {
namespace {

using testing::nic_end;
using testing::round_cluster;
using testing::switch_end;

constexpr double kS = 1e9;  // bytes

Collective all_reduce(int nodes, int per_node, double bytes = kS) {
  return {CollectiveKind::kAllReduce, bytes, {nodes * per_node, nodes, per_node, nullptr}};
}

// Collectives started together at time 0 through the flow model: when each
// finished, in ns, in the order they finished.
std::vector<core::Time> flow_finish_times(CollectivePlanner& planner, const std::vector<Collective>& collectives) {
  FlowBackend flow(planner);
  core::Simulator sim;
  std::vector<core::Time> done;
  for (const Collective& c : collectives) flow.start(c, sim, [&] { done.push_back(sim.now()); });
  sim.run();
  return done;
}

// The collective alone through the flow model, in ns.
core::Time flow_time(CollectivePlanner& planner, const Collective& c) { return flow_finish_times(planner, {c}).at(0); }

// ns from seconds, for expectations written in seconds.
core::Time ns(double seconds) { return static_cast<core::Time>(seconds * 1e9 + 0.5); }

constexpr double kRingBuffer = 4.0 * 1024 * 1024;  // B (NCCL_BUFFSIZE)

TEST(CollectiveEngine, RingAllReduceInANode) {
  // 2(n-1) alpha + 2(n-1)/n S/B + (2n-3) min(buffer, S/n)/B
  //   = 14 x 2 us + 1.75 GB / 400 GB/s + 13 x 4 MiB / 400 GB/s.
  const Topology t = build_topology(round_cluster(1, 8, 8));
  CollectivePlanner p(t, Algorithm::kRing);
  const Collective c = all_reduce(1, 8);
  const double fill = 13 * kRingBuffer / 400e9;
  EXPECT_EQ(p.plan(c).duration(kS), ns(28e-6 + 4.375e-3 + fill));
  EXPECT_EQ(flow_time(p, c), ns(28e-6 + 4.375e-3 + fill));
}

TEST(CollectiveEngine, RingPipelineFillsWithSlicesBelowTheBuffer) {
  // S = 8 MB: slices of 1 MB, under the 4 MiB buffer, so every step after the
  // first waits for its whole slice: 13 x 1 MB / 400 GB/s on top of 14 alpha
  // + 1.75 x 8 MB / 400 GB/s.
  const Topology t = build_topology(round_cluster(1, 8, 8));
  CollectivePlanner p(t, Algorithm::kRing);
  const Collective c{CollectiveKind::kAllReduce, 8e6, {8, 1, 8, nullptr}};
  EXPECT_EQ(p.plan(c).duration(8e6), ns(28e-6 + 1.75 * 8e6 / 400e9 + 13 * 1e6 / 400e9));
  // ring_buffer = 0 turns the pipeline term off: the plain alpha-beta ring.
  hw::ClusterSpec none = round_cluster(1, 8, 8);
  none.intra_node.ring_buffer = 0.0;
  const Topology t0 = build_topology(none);
  CollectivePlanner p0(t0, Algorithm::kRing);
  EXPECT_EQ(p0.plan(c).duration(8e6), ns(28e-6 + 1.75 * 8e6 / 400e9));
}

TEST(CollectiveEngine, NvlsLoopIterationsFollowNcclChunkSizes) {
  // 8 heads x 16 channels = 128 chunk slots. 1 MiB < 2 x 128 x 32 KiB: 16 KiB
  // chunks, 1 iteration; 16 MiB: 32 KiB chunks, 4; 128 MiB: 64 KiB, 16;
  // 1 GiB: 128 KiB, 64 (NCCL 2.18 computeColl).
  SizeLatency z;
  z.loop_overhead = 1e-6;
  z.loop_heads = 8;
  const double mib = 1024.0 * 1024.0;
  EXPECT_DOUBLE_EQ(z.at(mib), 1e-6);
  EXPECT_DOUBLE_EQ(z.at(16 * mib), 4e-6);
  EXPECT_DOUBLE_EQ(z.at(128 * mib), 16e-6);
  EXPECT_DOUBLE_EQ(z.at(1024 * mib), 64e-6);
}

TEST(CollectiveEngine, RingAllGatherAndReduceScatterMoveHalfTheVolume) {
  const Topology t = build_topology(round_cluster(1, 8, 8));
  CollectivePlanner p(t, Algorithm::kRing);
  for (CollectiveKind k : {CollectiveKind::kAllGather, CollectiveKind::kReduceScatter}) {
    const Collective c{k, kS, {8, 1, 8, nullptr}};
    // 7 alpha + 7/8 S/B + 6 x 4 MiB / B
    EXPECT_EQ(p.plan(c).duration(kS), ns(14e-6 + 2.1875e-3 + 6 * kRingBuffer / 400e9));
  }
}

TEST(CollectiveEngine, GatherScatterStartupIsPaidOncePerCallByGatherAndScatterOnly) {
  // gather_scatter_startup = 32 us on top of the ring of the test above, under
  // both models; a hierarchical reduce_scatter across 2 nodes pays it once, not
  // per phase; all_reduce and all_to_all do not pay it.
  hw::ClusterSpec spec = round_cluster(2, 8, 8);
  spec.intra_node.gather_scatter_startup = 32e-6;
  const Topology t = build_topology(spec);
  const Topology plain = build_topology(round_cluster(2, 8, 8));
  CollectivePlanner ring(t, Algorithm::kRing);
  for (CollectiveKind k : {CollectiveKind::kAllGather, CollectiveKind::kReduceScatter}) {
    const Collective c{k, kS, {8, 1, 8, nullptr}};
    const core::Time expected = ns(14e-6 + 2.1875e-3 + 6 * kRingBuffer / 400e9 + 32e-6);
    EXPECT_EQ(ring.plan(c).duration(kS), expected);
    EXPECT_EQ(flow_time(ring, c), expected);
  }
  CollectivePlanner hier(t, Algorithm::kHierarchical);
  CollectivePlanner hier0(plain, Algorithm::kHierarchical);
  const Collective rs{CollectiveKind::kReduceScatter, kS, {16, 2, 8, nullptr}};
  EXPECT_EQ(hier.plan(rs).duration(kS), hier0.plan(rs).duration(kS) + ns(32e-6));
  CollectivePlanner ring0(plain, Algorithm::kRing);
  EXPECT_EQ(ring.plan(all_reduce(1, 8)).duration(kS), ring0.plan(all_reduce(1, 8)).duration(kS));
  CollectivePlanner direct(t, Algorithm::kDirect);
  CollectivePlanner direct0(plain, Algorithm::kDirect);
  const Collective a2a{CollectiveKind::kAllToAll, kS, {8, 1, 8, nullptr}};
  EXPECT_EQ(direct.plan(a2a).duration(kS), direct0.plan(a2a).duration(kS));
}

TEST(CollectiveEngine, AllToAllInANodeRunsAtItsOwnRateAndStartup) {
  // all_to_all_efficiency 0.5 of 400 GB/s: each GPU sends 7/8 S at 200 GB/s, its 7
  // transfers capped at 200/7 GB/s each, one step of alpha = 2 us, plus the 48 us
  // start-up: 2 us + 0.875 GB / 200 GB/s + 48 us, direct and pairwise (7 phases of
  // S/8 at 200 GB/s, 7 alpha) alike in bytes, under both models. Across two nodes
  // the cap counts only the sender's same-node transfers.
  hw::ClusterSpec spec = round_cluster(2, 8, 8);
  spec.intra_node.all_to_all_efficiency = 0.5;
  spec.intra_node.all_to_all_startup = 48e-6;
  const Topology t = build_topology(spec);
  CollectivePlanner direct(t, Algorithm::kDirect);
  const Collective a2a{CollectiveKind::kAllToAll, kS, {8, 1, 8, nullptr}};
  EXPECT_EQ(direct.plan(a2a).duration(kS), ns(2e-6 + 0.875e9 / 200e9 + 48e-6));
  EXPECT_EQ(flow_time(direct, a2a), ns(2e-6 + 0.875e9 / 200e9 + 48e-6));
  CollectivePlanner pairwise(t, Algorithm::kPairwise);
  EXPECT_EQ(pairwise.plan(a2a).duration(kS), ns(7 * (2e-6 + 0.125e9 / 200e9) + 48e-6));
  const Schedule wide = build_schedule(CollectiveKind::kAllToAll, Algorithm::kDirect,
                                       std::vector<long long>{0, 1, 2, 8, 9}, 5e9, t);
  for (const Transfer& x : wide.phases.front().transfers) {
    const bool same_node = (x.src < 8) == (x.dst < 8);
    const double peers = x.src < 8 ? 2.0 : 1.0;
    EXPECT_DOUBLE_EQ(x.rate_cap, same_node ? 200e9 / peers : 0.0) << x.src << "->" << x.dst;
  }
}

TEST(CollectiveEngine, DoubleBinaryTreeLoadsEachRankWithTwiceS) {
  // 8 ranks: in-order trees of depth 3 (1 -> 2 -> 4 -> 8); every rank is inner
  // in one tree (S/2 up, S/2 to each of two children) and a leaf in the other
  // (S/2 up): 2 S per link, so 2 x 3 alpha + 2 S/B.
  const Topology t = build_topology(round_cluster(1, 8, 8));
  CollectivePlanner p(t, Algorithm::kTree);
  const Collective c = all_reduce(1, 8);
  EXPECT_EQ(p.plan(c).duration(kS), ns(12e-6 + 5e-3));
  EXPECT_EQ(flow_time(p, c), ns(12e-6 + 5e-3));
}

TEST(CollectiveEngine, HalvingDoubling) {
  // 2 log2(n) alpha + 2 (n-1)/n S/B in 6 exchanges of S/2, S/4, S/8 and back.
  const Topology t = build_topology(round_cluster(1, 8, 8));
  CollectivePlanner p(t, Algorithm::kHalvingDoubling);
  const Collective c = all_reduce(1, 8);
  EXPECT_EQ(p.plan(c).phases.size(), 6u);
  EXPECT_EQ(p.plan(c).duration(kS), ns(12e-6 + 4.375e-3));
  EXPECT_EQ(flow_time(p, c), ns(12e-6 + 4.375e-3));
}

TEST(CollectiveEngine, InSwitchReductionMovesSTimesKPlusOneOverK) {
  // Each GPU sends S (k+1)/k up and receives as much, at nvls_efficiency x B
  // = 200 GB/s: 1.125 GB / 200 GB/s, plus two half-step latencies.
  hw::ClusterSpec cl = round_cluster(1, 8, 8);
  cl.intra_node.nvls_efficiency = 0.5;
  const Topology t = build_topology(cl);
  CollectivePlanner p(t, Algorithm::kNvls);
  const Collective c = all_reduce(1, 8);
  EXPECT_EQ(p.plan(c).duration(kS), ns(2e-6 + 5.625e-3));
  EXPECT_EQ(flow_time(p, c), ns(2e-6 + 5.625e-3));
  // Without in-switch reduction the algorithm is unavailable, and auto skips it.
  const Topology plain = build_topology(round_cluster(1, 8, 8));
  EXPECT_TRUE(unavailable(CollectiveKind::kAllReduce, Algorithm::kNvls, std::vector<long long>{0, 1}, plain));
}

TEST(CollectiveEngine, TwoFlowsOnOneLinkGetHalfEach) {
  const Topology t = build_topology(round_cluster(1, 8, 8));
  CollectivePlanner p(t);
  auto pair = std::make_shared<const std::vector<std::vector<long long>>>(std::vector<std::vector<long long>>{{0, 1}});
  const Collective send{CollectiveKind::kSendRecv, kS, {2, 1, 2, pair}};
  EXPECT_EQ(p.plan(send).duration(kS), ns(2e-6 + 2.5e-3));  // alone: alpha + S/B
  EXPECT_EQ(flow_finish_times(p, {send, send}), (std::vector<core::Time>{ns(2e-6 + 5e-3), ns(2e-6 + 5e-3)}));
}

TEST(CollectiveEngine, HierarchicalBeatsAFlatRingAcrossNodes) {
  // Latency: a flat ring over 16 ranks waits 2 x 15 steps of the slowest
  // (inter-node, 10 us) path; hierarchical 7 + 7 intra steps of 2 us and 2
  // inter steps: 300 us / 48 us = 6.25.
  const Topology eight_nics = build_topology(round_cluster(2, 8, 8));
  CollectivePlanner ring(eight_nics, Algorithm::kRing);
  CollectivePlanner hier(eight_nics, Algorithm::kHierarchical);
  const Collective tiny = all_reduce(2, 8, 0.0);
  EXPECT_EQ(ring.plan(tiny).duration(0.0), ns(300e-6));
  EXPECT_EQ(hier.plan(tiny).duration(0.0), ns(48e-6));
  // Bandwidth with one NIC per node: the flat ring sends 2 x 15/16 S through it
  // (37.5 ms); hierarchical sends S (8 rings of S/8) after 7/8 S/B inside the
  // node and before as much again: 20 ms + 2 x 2.1875 ms. Ratio 1.548.
  const Topology one_nic = build_topology(round_cluster(2, 8, 1));
  CollectivePlanner ring1(one_nic, Algorithm::kRing);
  CollectivePlanner hier1(one_nic, Algorithm::kHierarchical);
  const Collective big = all_reduce(2, 8);
  EXPECT_EQ(ring1.plan(big).duration(kS), ns(300e-6 + 37.5e-3));
  EXPECT_EQ(hier1.plan(big).duration(kS), ns(48e-6 + 24.375e-3));
  EXPECT_EQ(flow_time(ring1, big), ns(300e-6 + 37.5e-3));
  EXPECT_EQ(flow_time(hier1, big), ns(48e-6 + 24.375e-3));
}

TEST(CollectiveEngine, OversubscribedSpineSlowsACrossLeafRingByItsRatio) {
  // 8 one-GPU nodes on 2 leaves of 4 (radix 8, 2 tiers). The ring 0..7 crosses
  // between leaves twice; at 4:1 those edges get 12.5 GB/s instead of 50, so the
  // bandwidth term 1.75 GB / 50 GB/s = 35 ms becomes 140 ms. Latency: 14 steps
  // of 10 us either way.
  for (double o : {1.0, 4.0}) {
    hw::ClusterSpec cl = round_cluster(8, 1, 1, "fat_tree", 8);
    cl.inter_node.tiers = 2;
    cl.inter_node.oversubscription = o;
    const Topology t = build_topology(cl);
    CollectivePlanner p(t, Algorithm::kRing);
    const Collective c = all_reduce(8, 1);
    const core::Time expected = ns(140e-6 + 35e-3 * o);
    EXPECT_EQ(p.plan(c).duration(kS), expected) << o;
    EXPECT_EQ(flow_time(p, c), expected) << o;
  }
}

TEST(CollectiveEngine, TwoJobsSharingASpineEachSeeHalf) {
  // Nodes 0, 1 on switch A, nodes 2, 3 on switch B, one 50 GB/s cable between.
  hw::ClusterSpec cl = round_cluster(4, 1, 1, "custom");
  cl.inter_node.custom_links = {
      {nic_end(0, 0), switch_end("A"), 50e9, 0.0}, {nic_end(1, 0), switch_end("A"), 50e9, 0.0},
      {nic_end(2, 0), switch_end("B"), 50e9, 0.0}, {nic_end(3, 0), switch_end("B"), 50e9, 0.0},
      {switch_end("A"), switch_end("B"), 50e9, 0.0}};
  const Topology t = build_topology(cl);
  CollectivePlanner p(t);
  using Groups = std::vector<std::vector<long long>>;
  const Collective job_a{CollectiveKind::kSendRecv, kS, {2, 2, 1, std::make_shared<const Groups>(Groups{{0, 2}})}};
  const Collective job_b{CollectiveKind::kSendRecv, kS, {2, 2, 1, std::make_shared<const Groups>(Groups{{1, 3}})}};
  EXPECT_EQ(p.plan(job_a).duration(kS), ns(2e-6 + 20e-3));
  EXPECT_EQ(flow_finish_times(p, {job_a, job_b}), (std::vector<core::Time>{ns(2e-6 + 40e-3), ns(2e-6 + 40e-3)}));
}

// Exclusive phases (FlowBackend) change no time. Two sends from GPU 0 inside a
// node cross GPU 0's 400 GB/s up-link. Started together, the first is alone
// when it starts and handed to the solver when the second joins at the same
// instant: 1 GB each at 200 GB/s, 5 ms after the latency L. Started L apart,
// the first (2 GB) has sent 400 GB/s x L when the second (1 GB) joins; both at
// 200 GB/s for 5 ms, then the first alone for its last 1 GB - 400 GB/s x L.
TEST(CollectiveEngine, AnExclusivePhaseJoinedByAnotherIsSharedAsInTheSolver) {
  const Topology t = build_topology(round_cluster(1, 4, 1));
  CollectivePlanner p(t);
  using Groups = std::vector<std::vector<long long>>;
  const auto send = [](long long to, double bytes) {
    return Collective{CollectiveKind::kSendRecv, bytes, {2, 1, 2, std::make_shared<const Groups>(Groups{{0, to}})}};
  };
  const double latency = p.plan(send(1, 1e9)).phases.at(0).latency_at(1e9);
  for (const bool exclusive : {true, false}) {
    FlowBackend flow(p, {}, exclusive);
    core::Simulator sim;
    std::vector<core::Time> done(2, -1);
    flow.start(send(1, 1e9), sim, [&] { done[0] = sim.now(); });
    flow.start(send(2, 1e9), sim, [&] { done[1] = sim.now(); });
    sim.run();
    EXPECT_EQ(done, (std::vector<core::Time>{ns(latency + 5e-3), ns(latency + 5e-3)})) << exclusive;
    EXPECT_EQ(flow.statistics().adopted_flows, exclusive ? 1u : 0u);
  }
  for (const bool exclusive : {true, false}) {
    FlowBackend flow(p, {}, exclusive);
    core::Simulator sim;
    std::vector<core::Time> done(2, -1);
    flow.start(send(1, 2e9), sim, [&] { done[0] = sim.now(); });
    sim.schedule_at(ns(latency), [&] { flow.start(send(2, 1e9), sim, [&] { done[1] = sim.now(); }); });
    sim.run();
    const double joined = 2 * latency;
    EXPECT_EQ(done[1], ns(joined + 5e-3)) << exclusive;
    EXPECT_EQ(done[0], ns(joined + 5e-3 + (1e9 - 400e9 * latency) / 400e9)) << exclusive;
    EXPECT_EQ(flow.statistics().exclusive_flows, exclusive ? 1u : 0u);
    EXPECT_EQ(flow.statistics().adopted_flows, exclusive ? 1u : 0u);
  }
}

// The same on a busier mix: every node's tensor-parallel all-reduces one after
// another (alone on their NVLink, so exclusive), pipeline-like sends between
// nodes that join some of them through the GPUs' up-links (PXN), and an
// all-reduce over every GPU. Times, bytes per link, flows and solves agree bit
// for bit with every flow in the solver.
TEST(CollectiveEngine, ExclusivePhasesGiveTheSameTimesAndStatistics) {
  const Topology t = build_topology(round_cluster(4, 4, 2));
  CollectivePlanner p(t, Algorithm::kAuto, 2);
  using Groups = std::vector<std::vector<long long>>;
  std::vector<std::shared_ptr<const Groups>> tp;
  for (long long node = 0; node < 4; ++node)
    tp.push_back(std::make_shared<const Groups>(Groups{{4 * node, 4 * node + 1, 4 * node + 2, 4 * node + 3}}));
  struct Outcome {
    std::vector<std::pair<int, core::Time>> done;
    LinkStatistics stats;
  };
  const auto run = [&](bool exclusive) {
    FlowBackend flow(p, {}, exclusive);
    core::Simulator sim;
    Outcome out;
    // Each node: 12 all-reduces in a row, of sizes that differ.
    std::function<void(int, int)> next_tp = [&](int node, int k) {
      if (k == 12) return;
      const Collective c{CollectiveKind::kAllReduce, 1e7 * (1 + (node + 3 * k) % 5), {4, 1, 4, tp[static_cast<std::size_t>(node)]}};
      flow.start(c, sim, [&, node, k] {
        out.done.emplace_back(100 * node + k, sim.now());
        next_tp(node, k + 1);
      });
    };
    for (int node = 0; node < 4; ++node) next_tp(node, 0);
    for (int k = 0; k < 10; ++k) {
      const long long from = (k % 4) * 4 + k % 3;
      const long long to = ((k + 1) % 4) * 4 + k % 3;
      const Collective send{CollectiveKind::kSendRecv, 3e7, {2, 2, 1, std::make_shared<const Groups>(Groups{{from, to}})}};
      sim.schedule_at(ns(1e-4 * (k * 7 % 10)), [&, send, k] {
        flow.start(send, sim, [&, k] { out.done.emplace_back(1000 + k, sim.now()); });
      });
    }
    sim.schedule_at(ns(3e-4), [&] {
      flow.start(all_reduce(4, 4, 5e7), sim, [&] { out.done.emplace_back(2000, sim.now()); });
    });
    sim.run();
    out.stats = flow.statistics();
    return out;
  };
  const Outcome with = run(true);
  const Outcome without = run(false);
  ASSERT_EQ(with.done.size(), 4u * 12 + 10 + 1);
  EXPECT_EQ(with.done, without.done);
  EXPECT_EQ(with.stats.bytes, without.stats.bytes);
  EXPECT_EQ(with.stats.flows, without.stats.flows);
  EXPECT_EQ(with.stats.solves, without.stats.solves);
  EXPECT_EQ(without.stats.exclusive_flows, 0u);
  EXPECT_GT(with.stats.exclusive_flows, with.stats.adopted_flows);
  EXPECT_GT(with.stats.adopted_flows, 0u);
}

TEST(CollectiveEngine, AnalyticEqualsFlowWhenNothingContends) {
  const Topology t = build_topology(round_cluster(4, 8, 8));
  for (Algorithm a : {Algorithm::kRing, Algorithm::kTree, Algorithm::kHalvingDoubling, Algorithm::kHierarchical}) {
    for (CollectiveKind k : {CollectiveKind::kAllReduce, CollectiveKind::kAllGather, CollectiveKind::kReduceScatter}) {
      const Collective c{k, 3e8, {32, 4, 8, nullptr}};
      if (unavailable(k, a, std::vector<long long>(32, 0), t) && a != Algorithm::kHierarchical) continue;
      CollectivePlanner p(t, a);
      const RoutedSchedule& s = p.plan(c);
      if (s.algorithm != a) continue;
      const core::Time analytic = s.duration(c.bytes);
      const core::Time flow = flow_time(p, c);
      EXPECT_LE(std::llabs(analytic - flow), static_cast<long long>(s.phases.size()))
          << to_string(a) << " " << to_string(k) << ": " << analytic << " vs " << flow;
    }
  }
}

TEST(CollectiveEngine, AutoPicksTheFastestCandidate) {
  hw::ClusterSpec cl = round_cluster(1, 8, 8);
  cl.intra_node.nvls_efficiency = 0.8;
  const Topology t = build_topology(cl);
  CollectivePlanner p(t);
  for (double bytes : {1e3, 1e6, 1e9}) {
    const Collective c = all_reduce(1, 8, bytes);
    core::Time best = p.plan(c, Algorithm::kRing).duration(bytes);
    for (Algorithm a : candidates(CollectiveKind::kAllReduce, std::vector<long long>{0, 1, 2, 3, 4, 5, 6, 7}, t))
      best = std::min(best, p.plan(c, a).duration(bytes));
    EXPECT_EQ(p.plan(c).duration(bytes), best) << bytes;
  }
  // Large messages: NVLS (9/8 S at 320 GB/s) beats ring and halving-doubling (7/4 S at 400 GB/s).
  EXPECT_EQ(p.plan(all_reduce(1, 8, 1e9)).algorithm, Algorithm::kNvls);
}

TEST(CollectiveEngine, SymmetricCopiesShareTheLinksTheyUse) {
  // Two groups {GPU 0 of each node} and {GPU 1 of each node} with one NIC per
  // node: both cross on that NIC, so the pair takes twice as long as one group.
  const Topology t = build_topology(round_cluster(2, 8, 1));
  CollectivePlanner p(t, Algorithm::kRing);
  using Groups = std::vector<std::vector<long long>>;
  const Collective one{CollectiveKind::kAllReduce, kS, {2, 2, 1, std::make_shared<const Groups>(Groups{{0, 8}})}};
  const Collective two{CollectiveKind::kAllReduce, kS,
                       {2, 2, 1, std::make_shared<const Groups>(Groups{{0, 8}, {1, 9}})}};
  // 2 steps of 10 us; S over the NIC at 50 GB/s (2 x 1/2 x S), doubled by the copy.
  EXPECT_EQ(p.plan(one).duration(kS), ns(20e-6 + 20e-3));
  EXPECT_EQ(p.plan(two).duration(kS), ns(20e-6 + 40e-3));
  EXPECT_EQ(flow_time(p, two), ns(20e-6 + 40e-3));
}

TEST(CollectiveEngine, APlanIsAnsweredAgainPerGroupKindAndSize) {
  // plan(c) remembers its answer per (member lists or shape, kind, bytes): the
  // same collective gets the same schedule object back, and another group,
  // kind or size its own.
  const Topology t = build_topology(round_cluster(2, 8, 1));
  CollectivePlanner p(t, Algorithm::kRing);
  using Groups = std::vector<std::vector<long long>>;
  const auto first = std::make_shared<const Groups>(Groups{{0, 8}});
  const auto second = std::make_shared<const Groups>(Groups{{1, 9}});
  const Collective a{CollectiveKind::kAllReduce, kS, {2, 2, 1, first}};
  const Collective b{CollectiveKind::kAllReduce, kS, {2, 2, 1, second}};
  const RoutedSchedule& sa = p.plan(a);
  EXPECT_EQ(&p.plan(Collective{a}), &sa);
  // GPU 1's links, not GPU 0's: the same shape with other members is routed anew.
  const RoutedSchedule& sb = p.plan(b);
  ASSERT_FALSE(sa.phases.empty());
  ASSERT_FALSE(sb.phases.empty());
  EXPECT_NE(sa.phases[0].hops, sb.phases[0].hops);
  EXPECT_EQ(&p.plan(a), &sa);
  // Without member lists: the first ranks of each node, by shape.
  const Topology node = build_topology(round_cluster(1, 8, 8));
  CollectivePlanner automatic(node);
  const RoutedSchedule& small = automatic.plan(all_reduce(1, 8, 1e3));
  const RoutedSchedule& large = automatic.plan(all_reduce(1, 8, 1e9));
  EXPECT_EQ(&automatic.plan(all_reduce(1, 8, 1e3)), &small);
  EXPECT_EQ(&automatic.plan(all_reduce(1, 8, 1e9)), &large);
}

TEST(CollectiveEngine, BadGroupsAreRefused) {
  const Topology t = build_topology(round_cluster(2, 8, 8));
  CollectivePlanner p(t);
  EXPECT_THROW((void)p.plan({CollectiveKind::kAllReduce, kS, {12, 2, 5, nullptr}}), std::invalid_argument);
  EXPECT_THROW((void)p.plan({CollectiveKind::kAllReduce, kS, {24, 3, 8, nullptr}}), std::invalid_argument);
  EXPECT_THROW((void)build_schedule(CollectiveKind::kAllToAll, Algorithm::kRing, std::vector<long long>{0, 1}, kS, t),
               std::invalid_argument);
}

}  // namespace
}  // namespace trainsim::net
