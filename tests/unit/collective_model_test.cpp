// Alpha-beta collective costs against their closed forms.
#include <gtest/gtest.h>

#include "network/collective_model.h"
#include "test_scenarios.h"
#include "workload/layout.h"

namespace trainsim {
namespace {

using net::CollectiveKind;

TEST(Ring, AllReduceIs2nMinus1AlphaPlus2nMinus1OverNSOverB) {
  const net::Ring ring{100e9, 2e-6};
  const double S = 1e9;
  for (int n : {2, 3, 8, 64}) {
    SCOPED_TRACE(n);
    EXPECT_DOUBLE_EQ(ring.all_reduce(S, n), 2.0 * (n - 1) * 2e-6 + 2.0 * (n - 1) / n * S / 100e9);
    EXPECT_DOUBLE_EQ(ring.reduce_scatter(S, n), (n - 1) * 2e-6 + (n - 1.0) / n * S / 100e9);
  }
  EXPECT_EQ(ring.all_reduce(S, 1), 0.0);
}

TEST(HierarchicalRing, InsideOneNodeIsAFlatRingAtNvlinkBusBandwidth) {
  const auto s = testing::make_scenario("\"gpt2-124m\"");
  const net::HierarchicalRingModel model(s.cluster);
  // H100 preset: 450 GB/s x 0.822 ring efficiency, 1.83 us per step.
  const double B = 450e9 * 0.822, alpha = 1.83e-6, S = 8e9;
  const net::Collective c{CollectiveKind::kAllReduce, S, {8, 1, 8}};
  EXPECT_DOUBLE_EQ(model.seconds(c), 14 * alpha + 14.0 / 8 * S / B);
  // nccl-tests bus bandwidth = S/t * 2(n-1)/n -> B for large S.
  EXPECT_NEAR(S / model.seconds(c) * 14.0 / 8 / 1e9, 370.0, 0.5);
}

TEST(HierarchicalRing, AcrossNodesReduceScattersThenRingsOverNicsThenAllGathers) {
  const auto s = testing::make_scenario("\"gpt2-124m\"", "", "", 4);
  const net::HierarchicalRingModel model(s.cluster);
  const double Bn = 450e9 * 0.822, an = 1.83e-6;
  const double Bi = 400e9 / 8 * 0.94, ai = 9.6e-6;  // one 400 Gb/s NIC per GPU
  const double S = 1e9;
  const net::Collective c{CollectiveKind::kAllReduce, S, {32, 4, 8}};
  const double intra_rs = 7 * an + 7.0 / 8 * S / Bn;
  const double inter_ar = 6 * ai + 6.0 / 4 * (S / 8) / Bi;
  EXPECT_DOUBLE_EQ(model.seconds(c), 2 * intra_rs + inter_ar);
  // Hierarchical beats a flat ring over the NICs by moving 1/k of the data across nodes.
  const net::Ring flat{Bi, ai};
  EXPECT_LT(model.seconds(c), flat.all_reduce(S, 32));
}

TEST(HierarchicalRing, ReduceScatterAndAllGatherCostTheSame) {
  const auto s = testing::make_scenario("\"gpt2-124m\"", "", "", 2);
  const net::HierarchicalRingModel model(s.cluster);
  const net::Collective rs{CollectiveKind::kReduceScatter, 1e8, {16, 2, 8}};
  net::Collective ag = rs;
  ag.kind = CollectiveKind::kAllGather;
  EXPECT_DOUBLE_EQ(model.seconds(rs), model.seconds(ag));
  EXPECT_DOUBLE_EQ(model.seconds(rs), model.intra().reduce_scatter(1e8, 8) + model.inter().reduce_scatter(1e8 / 8, 2));
}

TEST(HierarchicalRing, RejectsInconsistentGroupsAndUnmodeledKinds) {
  const auto s = testing::make_scenario("\"gpt2-124m\"");
  const net::HierarchicalRingModel model(s.cluster);
  EXPECT_THROW((void)model.seconds({CollectiveKind::kAllReduce, 1.0, {8, 2, 8}}), std::invalid_argument);
  EXPECT_THROW((void)model.seconds({CollectiveKind::kAllToAll, 1.0, {8, 1, 8}}), std::invalid_argument);
}

TEST(Layout, GroupShapeFollowsTheRankOrder) {
  // DP of 64 with TP x CP = 1 on 8-GPU nodes: 8 per node over 8 nodes.
  auto g = workload::group_shape(64, 1, 8);
  EXPECT_EQ(g.ranks_per_node, 8);
  EXPECT_EQ(g.nodes, 8);
  // Stride 8 (TP 8): one member per node.
  g = workload::group_shape(16, 8, 8);
  EXPECT_EQ(g.ranks_per_node, 1);
  EXPECT_EQ(g.nodes, 16);
  // Stride 2: 4 per node; a group of 2 stays inside one node.
  g = workload::group_shape(2, 2, 8);
  EXPECT_EQ(g.ranks_per_node, 2);
  EXPECT_EQ(g.nodes, 1);
  EXPECT_THROW(workload::group_shape(8, 3, 8), std::invalid_argument);
}

}  // namespace
}  // namespace trainsim
