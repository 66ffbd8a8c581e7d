// Collectives at the times a calibration profile measured
// (network/measured_collectives.h): the interpolation by hand, what falls back
// to the network model, and a whole iteration whose tensor-parallel all-reduces
// take their measured times.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "execution/simulate.h"
#include "network/collective_engine.h"
#include "network/measured_collectives.h"
#include "report/metrics.h"
#include "report/summary.h"
#include "test_scenarios.h"

namespace trainsim {
namespace {

using hw::CollectiveRow;
using hw::CollectiveScope;
using net::Collective;
using net::CollectiveKind;

constexpr double kMiB = 1024.0 * 1024.0;

CollectiveRow row(const char* op, long long ranks, double bytes, double seconds,
                  CollectiveScope scope = CollectiveScope::kIntraNode, long long wrong = 0, long long nodes = 0) {
  CollectiveRow r;
  r.op = op;
  r.scope = scope;
  r.ranks = ranks;
  r.nodes = nodes;
  r.bytes = bytes;
  r.seconds = seconds;
  r.wrong = wrong;
  return r;
}

Collective all_reduce(double bytes, int size, int nodes = 1) {
  return {CollectiveKind::kAllReduce, bytes, {size, nodes, size / nodes, nullptr}};
}

// An all_reduce row measured across `nodes` nodes.
CollectiveRow across(long long ranks, long long nodes, double bytes, double seconds) {
  return row("all_reduce", ranks, bytes, seconds, CollectiveScope::kInterNode, 0, nodes);
}

TEST(MeasuredCollectives, AlgbwIsReadLinearlyInLnSBetweenMeasuredSizes) {
  // 1 MiB in 20 us and 16 MiB in 100 us: algbw 52.4288 and 167.77216 GB/s. 4 MiB
  // is halfway in ln S, so algbw = (52.4288 + 167.77216) / 2 GB/s = 110.10048 GB/s
  // and t = 4 MiB / 110.10048 GB/s = 38.0952 us.
  const net::MeasuredCollectives table({row("all_reduce", 8, kMiB, 20e-6), row("all_reduce", 8, 16 * kMiB, 100e-6)});
  ASSERT_FALSE(table.empty());
  EXPECT_DOUBLE_EQ(*table.seconds(all_reduce(kMiB, 8)), 20e-6);
  EXPECT_DOUBLE_EQ(*table.seconds(all_reduce(16 * kMiB, 8)), 100e-6);
  EXPECT_NEAR(*table.seconds(all_reduce(4 * kMiB, 8)), 4 * kMiB / 110.10048e9, 1e-15);
  EXPECT_NEAR(*table.seconds(all_reduce(4 * kMiB, 8)), 38.0952e-6, 1e-10);
}

TEST(MeasuredCollectives, WhatTheProfileDidNotMeasureGoesToTheNetworkModel) {
  const net::MeasuredCollectives table(
      {row("all_reduce", 8, kMiB, 20e-6), row("all_reduce", 8, 16 * kMiB, 100e-6),
       row("all_gather", 8, kMiB, 1e-6, CollectiveScope::kIntraNode, 3),      // wrong results
       row("all_gather", 8, 16 * kMiB, 1e-6, CollectiveScope::kIntraNode, 3),
       row("reduce_scatter", 16, kMiB, 1e-5, CollectiveScope::kInterNode),  // across nodes, spread unknown
       row("reduce_scatter", 16, 16 * kMiB, 1e-4, CollectiveScope::kInterNode),
       row("send_recv", 2, kMiB, 1e-5), row("send_recv", 2, 16 * kMiB, 1e-4)});
  EXPECT_FALSE(table.seconds(all_reduce(0.5 * kMiB, 8)));  // below the measured sizes
  EXPECT_FALSE(table.seconds(all_reduce(32 * kMiB, 8)));   // above them
  EXPECT_FALSE(table.seconds(all_reduce(4 * kMiB, 4)));    // not measured on 4 ranks
  EXPECT_FALSE(table.seconds(all_reduce(4 * kMiB, 8, 2)));  // a group over two nodes
  EXPECT_FALSE(table.seconds({CollectiveKind::kAllGather, 4 * kMiB, {8, 1, 8, nullptr}}));
  EXPECT_FALSE(table.seconds({CollectiveKind::kReduceScatter, 4 * kMiB, {16, 2, 8, nullptr}}));
  EXPECT_FALSE(table.seconds({CollectiveKind::kSendRecv, 4 * kMiB, {2, 1, 2, nullptr}}));
  EXPECT_TRUE(net::MeasuredCollectives({row("send_recv", 2, kMiB, 1e-5)}).empty());
}

TEST(MeasuredCollectives, GroupsAcrossNodesReadTheRowsOfTheirSpread) {
  // 16 ranks on 2 nodes x 8: 1 MiB in 100 us and 64 MiB in 1 ms, algbw
  // 1048576 / 100e-6 = 10.48576 GB/s and 67108864 / 1e-3 = 67.108864 GB/s. 8 MiB
  // is halfway in ln S (ln 8 / ln 64 = 1/2), so algbw = (10.48576 + 67.108864) / 2
  // = 38.797312 GB/s and t = 8388608 / 38.797312e9 = 1 / 4.625 ms = 216.216216 us.
  const net::MeasuredCollectives table({across(16, 2, kMiB, 100e-6), across(16, 2, 64 * kMiB, 1e-3)});
  ASSERT_FALSE(table.empty());
  EXPECT_DOUBLE_EQ(*table.seconds(all_reduce(kMiB, 16, 2)), 100e-6);
  EXPECT_DOUBLE_EQ(*table.seconds(all_reduce(64 * kMiB, 16, 2)), 1e-3);
  EXPECT_NEAR(*table.seconds(all_reduce(8 * kMiB, 16, 2)), 8 * kMiB / 38.797312e9, 1e-15);
  EXPECT_NEAR(*table.seconds(all_reduce(8 * kMiB, 16, 2)), 216.216216e-6, 1e-12);
  // The same 16 ranks spread otherwise, or the same spread of another operation:
  // the network model.
  EXPECT_FALSE(table.seconds(all_reduce(8 * kMiB, 16, 4)));   // 4 nodes x 4
  EXPECT_FALSE(table.seconds(all_reduce(8 * kMiB, 16, 1)));   // one node of 16
  EXPECT_FALSE(table.seconds(all_reduce(8 * kMiB, 32, 2)));   // 2 nodes x 16
  EXPECT_FALSE(table.seconds(all_reduce(128 * kMiB, 16, 2)));  // above the measured sizes
  EXPECT_FALSE(table.seconds({CollectiveKind::kAllGather, 8 * kMiB, {16, 2, 8, nullptr}}));
  // A group whose fields disagree (16 != 2 x 4) is not read as either spread.
  EXPECT_FALSE(table.seconds({CollectiveKind::kAllReduce, 8 * kMiB, {16, 2, 4, nullptr}}));
}

TEST(MeasuredCollectives, RowsOfOneRankCountOnDifferentSpreadsStayApart) {
  // 16 ranks in one node at a flat 200 GB/s, on 2 nodes x 8 at 40 GB/s, on 4 x 4
  // at 20 GB/s: 16 MiB takes 16777216 / 200e9 = 83.88608 us, / 40e9 = 419.4304 us,
  // / 20e9 = 838.8608 us.
  std::vector<CollectiveRow> rows;
  for (const double bytes : {kMiB, 256 * kMiB}) {
    rows.push_back(row("all_reduce", 16, bytes, bytes / 200e9, CollectiveScope::kIntraNode, 0, 1));
    rows.push_back(across(16, 2, bytes, bytes / 40e9));
    rows.push_back(across(16, 4, bytes, bytes / 20e9));
  }
  const net::MeasuredCollectives table(rows);
  EXPECT_NEAR(*table.seconds(all_reduce(16 * kMiB, 16, 1)), 83.88608e-6, 1e-15);
  EXPECT_NEAR(*table.seconds(all_reduce(16 * kMiB, 16, 2)), 419.4304e-6, 1e-15);
  EXPECT_NEAR(*table.seconds(all_reduce(16 * kMiB, 16, 4)), 838.8608e-6, 1e-15);
  EXPECT_FALSE(table.seconds(all_reduce(16 * kMiB, 16, 8)));  // 8 x 2: not measured
}

TEST(MeasuredCollectives, AnUnevenGroupMatchesNoEvenRows) {
  // 12 ranks measured on 2 nodes x 6. A group of named members with 8 on one node
  // and 4 on the other has shape {12, 2 nodes, 8 (its largest count per node)}:
  // 12 != 2 x 8, so it is not read as 2 x 6 and falls back; 2 x 6 itself is
  // priced: 12 MiB at a flat 30 GB/s, 12582912 / 30e9 = 419.4304 us.
  const net::MeasuredCollectives table({across(12, 2, kMiB, kMiB / 30e9), across(12, 2, 64 * kMiB, 64 * kMiB / 30e9)});
  EXPECT_NEAR(*table.seconds(all_reduce(12 * kMiB, 12, 2)), 419.4304e-6, 1e-15);
  EXPECT_FALSE(table.seconds({CollectiveKind::kAllReduce, 12 * kMiB, {12, 2, 8, nullptr}}));
}

TEST(MeasuredCollectives, InterNodeRowsWithoutTheirNodeCountNeverPrice) {
  // Older profiles: "scope": "inter_node" without "nodes". 16 ranks could be 2 x 8,
  // 4 x 4, ...: no group is priced by them.
  const net::MeasuredCollectives old({across(16, 0, kMiB, 100e-6), across(16, 0, 64 * kMiB, 1e-3)});
  EXPECT_TRUE(old.empty());
  for (const int nodes : {1, 2, 4, 8, 16}) EXPECT_FALSE(old.seconds(all_reduce(8 * kMiB, 16, nodes))) << nodes;
  // Nor do rows whose node count does not divide their ranks, or is 1 for an
  // inter_node row (the reader refuses both; rows built in code are skipped).
  EXPECT_TRUE(net::MeasuredCollectives({across(16, 3, kMiB, 1e-4), across(16, 3, 64 * kMiB, 1e-3)}).empty());
  EXPECT_TRUE(net::MeasuredCollectives({across(16, 1, kMiB, 1e-4), across(16, 1, 64 * kMiB, 1e-3)}).empty());
  EXPECT_TRUE(net::MeasuredCollectives({across(4, 8, kMiB, 1e-4), across(4, 8, 64 * kMiB, 1e-3)}).empty());
}

TEST(MeasuredCollectives, DataParallelAllReducesAcrossNodesTakeTheirMeasuredTimes) {
  // TP 8 inside each of two 8-GPU H100 nodes, DP 2 across them: the gradient
  // all-reduces run over groups of 2 ranks on 2 nodes x 1. The profile measured
  // all_reduce on 2 ranks over 2 nodes at a flat 25 GB/s of algbw from 8 B to
  // 4 GiB: each of them lasts S / 25 GB/s (rounded up to the ns); the tensor-
  // parallel ones (8 ranks in a node, not measured) keep the network model's times.
  config::Scenario s = testing::make_scenario(
      R"({"num_layers": 2, "hidden_size": 1024, "num_attention_heads": 8, "seq_length": 512, "vocab_size": 32000})",
      R"("micro_batch_size": 8)", R"("tp": 8, "dp": 2)", 2);
  auto profile = std::make_shared<hw::CalibrationProfile>();
  profile->device.name = "NVIDIA H100 80GB HBM3";
  for (double bytes = 8; bytes <= 4.0 * 1024 * kMiB; bytes *= 2)
    profile->collectives.push_back(across(2, 2, bytes, bytes / 25e9));
  s.calibration = config::CalibrationSource{"h100-2nodes.json", profile, {}};
  const exec::SimulationOutput out = exec::simulate(s);
  int across_nodes = 0;
  for (const exec::Span& span : out.timeline.spans) {
    const workload::Task& t = out.iteration.graph[span.task];
    const workload::Work& w = out.iteration.graph.work(t);
    if (!w.collective || w.collective->kind != CollectiveKind::kAllReduce || w.collective->group.nodes != 2) continue;
    ASSERT_EQ(w.collective->group.size, 2);
    ++across_nodes;
    EXPECT_EQ(span.end - span.start, net::ceil_to_time(w.collective->bytes / 25e9)) << w.name;
  }
  EXPECT_GT(across_nodes, 0);
  ASSERT_TRUE(out.calibration.has_value());
  EXPECT_GT(out.calibration->collectives_measured, 0);
  EXPECT_GT(out.calibration->collectives_modeled, 0);  // the tensor-parallel all-reduces
  EXPECT_EQ(report::compute_metrics(s, out).calibration->collective_rows_without_nodes, 0);
  // The same rows without "nodes" price nothing: every collective is modeled.
  for (CollectiveRow& r : profile->collectives) r.nodes = 0;
  const exec::SimulationOutput unplaced = exec::simulate(s);
  EXPECT_EQ(unplaced.calibration->collectives_measured, 0);
  EXPECT_EQ(unplaced.calibration->collectives_modeled,
            out.calibration->collectives_measured + out.calibration->collectives_modeled);
  // The summary says why: the 30 rows (8 B, 16 B, ..., 4 GiB = 2^3 .. 2^32) lack "nodes".
  const report::Metrics m = report::compute_metrics(s, unplaced);
  EXPECT_EQ(m.calibration->collective_rows_without_nodes, 30);
  EXPECT_NE(report::summary_text(s, m).find("(30 inter_node profile rows without \"nodes\" price none)"),
            std::string::npos);
}

TEST(MeasuredCollectives, TensorParallelAllReducesTakeTheirMeasuredTimes) {
  // GPT-style layers with TP 8 on one 8-GPU H100 node; the profile measured
  // all_reduce on 8 ranks at a flat 100 GB/s of algbw from 8 B to 4 GiB, nothing
  // else: every all-reduce of 8 ranks lasts S / 100 GB/s (rounded up to the ns).
  config::Scenario s = testing::make_scenario(
      R"({"num_layers": 2, "hidden_size": 1024, "num_attention_heads": 8, "seq_length": 512, "vocab_size": 32000})",
      R"("micro_batch_size": 8)", R"("tp": 8, "dp": 1)");
  auto profile = std::make_shared<hw::CalibrationProfile>();
  profile->device.name = "NVIDIA H100 80GB HBM3";
  for (double bytes = 8; bytes <= 4.0 * 1024 * kMiB; bytes *= 2)
    profile->collectives.push_back(row("all_reduce", 8, bytes, bytes / 100e9));
  s.calibration = config::CalibrationSource{"h100.json", profile, {}};
  const exec::SimulationOutput out = exec::simulate(s);
  int all_reduces = 0;
  for (const exec::Span& span : out.timeline.spans) {
    const workload::Task& t = out.iteration.graph[span.task];
    const workload::Work& w = out.iteration.graph.work(t);
    if (!w.collective || w.collective->kind != CollectiveKind::kAllReduce || w.collective->group.size != 8) continue;
    ++all_reduces;
    EXPECT_EQ(span.end - span.start, net::ceil_to_time(w.collective->bytes / 100e9)) << w.name;
  }
  EXPECT_GT(all_reduces, 8);  // two per layer forward and backward, per micro-batch
  ASSERT_TRUE(out.calibration.has_value());
  EXPECT_GT(out.calibration->collectives_measured, 0);
  // Without the profile's collectives the same iteration takes the network model's times.
  profile->collectives.clear();
  const exec::SimulationOutput modeled = exec::simulate(s);
  EXPECT_EQ(modeled.calibration->collectives_measured, 0);
  EXPECT_EQ(modeled.calibration->collectives_modeled,
            out.calibration->collectives_measured + out.calibration->collectives_modeled);
  EXPECT_NE(modeled.timeline.makespan, out.timeline.makespan);
}

}  // namespace
}  // namespace trainsim
