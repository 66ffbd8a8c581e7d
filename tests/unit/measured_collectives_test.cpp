// Collectives at the times a calibration profile measured
// (network/measured_collectives.h): the interpolation by hand, what falls back
// to the network model, and a whole iteration whose tensor-parallel all-reduces
// take their measured times.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>

#include "execution/simulate.h"
#include "network/collective_engine.h"
#include "network/measured_collectives.h"
#include "test_scenarios.h"

namespace trainsim {
namespace {

using hw::CollectiveRow;
using hw::CollectiveScope;
using net::Collective;
using net::CollectiveKind;

constexpr double kMiB = 1024.0 * 1024.0;

CollectiveRow row(const char* op, long long ranks, double bytes, double seconds,
                  CollectiveScope scope = CollectiveScope::kIntraNode, long long wrong = 0) {
  CollectiveRow r;
  r.op = op;
  r.scope = scope;
  r.ranks = ranks;
  r.bytes = bytes;
  r.seconds = seconds;
  r.wrong = wrong;
  return r;
}

Collective all_reduce(double bytes, int size, int nodes = 1) {
  return {CollectiveKind::kAllReduce, bytes, {size, nodes, size / nodes, nullptr}};
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
       row("reduce_scatter", 16, kMiB, 1e-5, CollectiveScope::kInterNode),  // across nodes
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

TEST(MeasuredCollectives, TensorParallelAllReducesTakeTheirMeasuredTimes) {
  // GPT-style layers with TP 8 on one 8-GPU H100 node; the profile measured
  // all_reduce on 8 ranks at a flat 100 GB/s of algbw from 8 B to 4 GiB, nothing
  // else: every all-reduce of 8 ranks lasts S / 100 GB/s (rounded up to the ns).
  scenario::Scenario s = testing::make_scenario(
      R"({"num_layers": 2, "hidden_size": 1024, "num_attention_heads": 8, "seq_length": 512, "vocab_size": 32000})",
      R"("micro_batch_size": 8)", R"("tp": 8, "dp": 1)");
  auto profile = std::make_shared<hw::CalibrationProfile>();
  profile->device.name = "NVIDIA H100 80GB HBM3";
  for (double bytes = 8; bytes <= 4.0 * 1024 * kMiB; bytes *= 2)
    profile->collectives.push_back(row("all_reduce", 8, bytes, bytes / 100e9));
  s.calibration = scenario::CalibrationSource{"h100.json", profile, {}};
  const exec::SimulationOutput out = exec::simulate(s);
  int all_reduces = 0;
  for (const exec::Span& span : out.timeline.spans) {
    const workload::Task& t = out.iteration.graph[span.task];
    if (!t.collective || t.collective->kind != CollectiveKind::kAllReduce || t.collective->group.size != 8) continue;
    ++all_reduces;
    EXPECT_EQ(span.end - span.start, net::ceil_to_time(t.collective->bytes / 100e9)) << t.name;
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
