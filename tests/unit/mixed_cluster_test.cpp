// A job on a mixed cluster (cluster.pools; docs/model.md, "Heterogeneous jobs"): the
// scenario's pools, each rank's kernels priced on its own GPU, each stage's layers
// balanced by its GPUs' speed, the links of each pool, power summed over pools.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "execution/executor.h"
#include "execution/simulate.h"
#include "fake_costs.h"
#include "hardware/power.h"
#include "network/topology_builders.h"
#include "scenario/errors.h"
#include "scenario/mixed_cluster.h"
#include "scenario/reader.h"
#include "scenario/sweep_spec_reader.h"
#include "sweep/evaluate.h"
#include "sweep/outcome.h"
#include "sweep/space.h"
#include "workload/heterogeneous.h"
#include "workload/iteration_builder.h"

namespace trainsim {
namespace {

// A kernel takes its FLOPs at `rate` FLOP/s (memory-bound kernels nothing, as Teraflop).
class FlopRate final : public hw::ComputeModel {
 public:
  explicit FlopRate(double rate) : rate_(rate) {}
  [[nodiscard]] double seconds(const hw::KernelWork& w, hw::Precision) const override { return w.flops / rate_; }
  [[nodiscard]] std::string_view name() const override { return "flop rate"; }

 private:
  double rate_;
};

// Two pools of 8-GPU nodes: `a` nodes of the first GPU, `b` of the second.
config::Scenario mixed(const std::string& gpu_a, int a, const std::string& gpu_b, int b, const std::string& model,
                       const std::string& parallelism, const std::string& extra_cluster = "",
                       const std::string& training = "") {
  const std::string text = R"({"cluster": {"pools": [{"gpu": ")" + gpu_a + R"(", "num_nodes": )" + std::to_string(a) +
                           R"(}, {"gpu": ")" + gpu_b + R"(", "num_nodes": )" + std::to_string(b) + "}]" +
                           extra_cluster + R"(}, "model": )" + model +
                           R"(, "training": {"global_batch_size": 96)" + training + R"(}, "parallelism": {)" +
                           parallelism + "}}";
  return scenario::parse_scenario_text(text, "mixed.json");
}

const std::string kEighty = R"({"num_layers": 80, "hidden_size": 1024, "num_attention_heads": 8,
                                "seq_length": 512, "vocab_size": 128})";

TEST(MixedCluster, PoolsNumberTheirNodesInOrderAndPayTheirOwnPrices) {
  const config::Scenario s = mixed("A100-SXM4-80GB", 3, "H100-SXM5-80GB", 1, kEighty, R"("tp": 8)",
                                   "", "");
  const hw::ClusterSpec& c = s.cluster;
  EXPECT_TRUE(c.heterogeneous());
  EXPECT_EQ(c.num_nodes, 4);
  EXPECT_EQ(c.num_gpus(), 32);
  EXPECT_EQ(c.gpu.name, "A100-SXM4-80GB");  // pool 0's
  EXPECT_EQ(c.pool_of_node(2), 0);
  EXPECT_EQ(c.pool_of_node(3), 1);
  EXPECT_EQ(c.pool_of_rank(23), 0);
  EXPECT_EQ(c.pool_of_rank(24), 1);
  // Each pool's fabric and NIC from its own preset: 300 and 450 GB/s NVLink, 200 and 400 Gb/s NICs.
  EXPECT_DOUBLE_EQ(c.pools[0].intra_node.bandwidth, 300e9);
  EXPECT_DOUBLE_EQ(c.pools[1].intra_node.bandwidth, 450e9);
  EXPECT_DOUBLE_EQ(c.pools[0].nic_bandwidth, 25e9);
  EXPECT_DOUBLE_EQ(c.pools[1].nic_bandwidth, 50e9);
  // MFU's peak is the mean over the GPUs: (24 x 312 + 8 x 989) / 32 TFLOP/s.
  EXPECT_DOUBLE_EQ(c.mean_peak(hw::Precision::kBf16),
                   (24.0 * c.pools[0].gpu.peak(hw::Precision::kBf16) + 8.0 * c.pools[1].gpu.peak(hw::Precision::kBf16)) / 32.0);

  const std::string priced = R"({"cluster": {"pools": [{"gpu": "A100-SXM4-80GB", "num_nodes": 3, "price_per_gpu_hour": 1.0},
      {"gpu": "H100-SXM5-80GB", "num_nodes": 1, "price_per_gpu_hour": 3.0}]}, "model": )" + kEighty +
                             R"(, "training": {"global_batch_size": 96}, "parallelism": {"tp": 8}})";
  // 24 GPUs at $1 and 8 at $3: $1.50 per GPU-hour on average.
  EXPECT_DOUBLE_EQ(*scenario::parse_scenario_text(priced, "p.json").cluster.price_per_gpu_hour, 1.5);
  // Owned: the A100 written down to $10,000 a GPU, the H100 bought at $30,000; the
  // owned cost is linear in the capex, so the cluster's is the GPUs' mean, $15,000.
  const std::string owned = R"({"cluster": {"pools": [{"gpu": "A100-SXM4-80GB", "num_nodes": 3, "capex_per_gpu": 10000},
      {"gpu": "H100-SXM5-80GB", "num_nodes": 1, "capex_per_gpu": 30000}],
      "ownership": {"amortization_years": 4, "electricity_price": 0.08}}, "model": )" + kEighty +
                            R"(, "training": {"global_batch_size": 96}, "parallelism": {"tp": 8}})";
  const std::optional<hw::Ownership> own = scenario::parse_scenario_text(owned, "o.json").cluster.ownership;
  ASSERT_TRUE(own.has_value());
  EXPECT_DOUBLE_EQ(own->capex_per_gpu, 15000.0);
  EXPECT_DOUBLE_EQ(own->amortization_years, 4.0);
}

void expect_refused(const std::string& text, const std::string& pointer, const std::string& words) {
  try {
    (void)scenario::parse_scenario_text(text, "bad.json");
    FAIL() << "accepted " << text;
  } catch (const scenario::ScenarioError& e) {
    EXPECT_NE(std::string(e.what()).find("bad.json"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(pointer), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
  }
}

TEST(MixedCluster, WhatPoolsCannotMixIsRefusedNamingTheField) {
  const std::string rest = R"(, "model": )" + kEighty + R"(, "training": {"global_batch_size": 96}})";
  expect_refused(R"({"cluster": {"gpu": "H100-SXM5-80GB", "pools": [{"gpu": "A100-SXM4-80GB", "num_nodes": 1}]})" + rest,
                 "/cluster/gpu", "move \"gpu\" into the pools");
  expect_refused(R"({"cluster": {"pools": [{"gpu": "H100-SXM5-80GB", "num_nodes": 1}, {"gpu": "GB200", "num_nodes": 18}]})" +
                     rest,
                 "/cluster/pools/1/gpu", "servers hold 8 GPUs");
  expect_refused(R"({"cluster": {"pools": [{"gpu": "H100-SXM5-80GB", "num_nodes": 1}, {"gpu": "MI300X", "num_nodes": 1}]})" +
                     rest,
                 "/cluster/pools/1/gpu", "mesh");
  expect_refused(R"({"cluster": {"pools": [{"gpu": "H100-SXM5-80GB", "num_nodes": 1, "price_per_gpu_hour": 2},
                                           {"gpu": "A100-SXM4-80GB", "num_nodes": 1}]})" + rest,
                 "/cluster/pools", "in every pool or in none");
  expect_refused(R"({"cluster": {"pools": []})" + rest, "/cluster/pools", "an array of 1 to 16 pools");
  expect_refused(R"({"cluster": {"pools": [{"gpu": "H100-SXM5-80GB", "num_nodes": 1, "capex_per_gpu": 30000},
                                           {"gpu": "A100-SXM4-80GB", "num_nodes": 1, "capex_per_gpu": 10000}]})" + rest,
                 "/cluster/pools", "needs cluster.ownership");
  expect_refused(R"({"cluster": {"pools": [{"gpu": "H100-SXM5-80GB", "num_nodes": 1, "capex_per_gpu": 30000},
                                           {"gpu": "A100-SXM4-80GB", "num_nodes": 1, "capex_per_gpu": 10000}],
                     "ownership": {"capex_per_gpu": 1, "amortization_years": 4, "electricity_price": 0.1}})" + rest,
                 "/cluster/ownership/capex_per_gpu", "not both");
  expect_refused(R"({"cluster": {"pools": [{"gpu": "H100-SXM5-80GB", "num_nodes": 1}, {"gpu": "A100-SXM4-80GB", "num_nodes": 1}]},
                    "model": )" + kEighty + R"(, "training": {"global_batch_size": 96, "precision": "fp8"}})",
                 "/training/precision", "A100-SXM4-80GB (cluster.pools[1]) has no fp8 peak");
  expect_refused(R"({"cluster": {"pools": [{"gpu": "H100-SXM5-80GB", "num_nodes": 1}, {"gpu": "A100-SXM4-80GB", "num_nodes": 1}]},
                    "model": )" + kEighty + R"(, "training": {"global_batch_size": 96}, "parallelism": {"mode": "async_ps"}})",
                 "/parallelism/mode", "\"sync\" on a mixed cluster");
}

TEST(MixedCluster, EachStagesRanksAreFoundOnTheirPools) {
  // tp 8 pp 3 on 2 + 1 nodes: stage s holds node s. tp 4 pp 2 dp 3 (24 ranks):
  // stage 0 ranks 0-11 (nodes 0 and 1), stage 1 ranks 12-23 (nodes 1 and 2).
  const config::Scenario a = mixed("A100-SXM4-80GB", 2, "H100-SXM5-80GB", 1, kEighty, R"("tp": 8, "pp": 3)");
  EXPECT_EQ(workload::stage_pools(a.parallel, a.cluster), (std::vector<std::vector<int>>{{0}, {0}, {1}}));
  const config::Scenario b = mixed("A100-SXM4-80GB", 2, "H100-SXM5-80GB", 1, kEighty, R"("tp": 4, "pp": 2)");
  EXPECT_EQ(b.parallel.data, 3);
  EXPECT_EQ(workload::stage_pools(b.parallel, b.cluster), (std::vector<std::vector<int>>{{0}, {0, 1}}));
}

TEST(MixedCluster, LayersAreSplitSoThatTheSlowestStageIsFastest) {
  // 80 equal layers on three stages, the third's GPUs three times as fast: 16 + 16
  // + 48 layers take 16 t on every stage (the 128-word vocabulary's embedding and
  // head cost a fraction of a layer, not enough to move one).
  const config::Scenario s = mixed("A100-SXM4-80GB", 2, "H100-SXM5-80GB", 1, kEighty, R"("tp": 8, "pp": 3)");
  const FlopRate slow(1e12);
  const FlopRate fast(3e12);
  const std::vector<const hw::ComputeModel*> models{&slow, &fast};
  const workload::StageSeconds seconds(s.model, s.training, s.parallel);
  EXPECT_EQ(workload::speed_balanced_layers(seconds, 80, {0, 0, 1}, models), (std::vector<long long>{16, 16, 48}));
  // The stages' decoder layers then take the same time: 16 t at 1 TFLOP/s = 48 t at 3.
  const double t = seconds.layer(0, slow);
  EXPECT_GT(t, 0.0);
  EXPECT_NEAR(seconds({16, 32, false, false}, slow), 16.0 * t, 1e-12 * t);
  EXPECT_NEAR(seconds({32, 80, false, false}, fast), 16.0 * t, 1e-12 * t);
  // Two stages, the second three times as fast: 20 + 60; a stage of one GPU type
  // alone holds all 80.
  EXPECT_EQ(workload::speed_balanced_layers(seconds, 80, {0, 1}, models), (std::vector<long long>{20, 60}));
  EXPECT_EQ(workload::speed_balanced_layers(seconds, 80, {1}, models), (std::vector<long long>{80}));
}

TEST(MixedCluster, TheReaderBalancesAMixedPipelineUnlessToldEven) {
  // A100 then H100: the H100 stage gets more layers; "even" keeps 40 + 40.
  const config::Scenario s = mixed("A100-SXM4-80GB", 1, "H100-SXM5-80GB", 1, kEighty, R"("tp": 8, "pp": 2)");
  ASSERT_EQ(s.parallel.layout_stage_layers.size(), 2U);
  EXPECT_EQ(s.parallel.layout_stage_layers[0] + s.parallel.layout_stage_layers[1], 80);
  EXPECT_LT(s.parallel.layout_stage_layers[0], s.parallel.layout_stage_layers[1]);
  const config::Scenario e =
      mixed("A100-SXM4-80GB", 1, "H100-SXM5-80GB", 1, kEighty, R"("tp": 8, "pp": 2, "pipeline_balance": "even")");
  EXPECT_TRUE(e.parallel.layout_stage_layers.empty());
}

TEST(MixedCluster, EachRankPricesTheSameWorkOnItsOwnPool) {
  // One kernel work of 4 FLOPs run by rank 0 (pool 0, 1 FLOP/s) and rank 1 (pool 1,
  // 2 FLOP/s), then an all-reduce of both (1 s): rank 1's kernel ends at 2 s, and
  // the all-reduce waits for rank 0's at 4 s: 5 s in all.
  workload::TaskGraph g;
  const workload::WorkId k = g.add_work({"k", {hw::KernelClass::kMatmul, 4.0, 0.0, 1}, std::nullopt, 0.0, std::nullopt, std::nullopt});
  const workload::WorkId ar = g.add_work(
      {"ar", {}, net::Collective{net::CollectiveKind::kAllReduce, 1.0, {2, 1, 2, nullptr}}, 0.0, std::nullopt, std::nullopt});
  std::vector<workload::TaskId> kernels;
  for (int rank = 0; rank < 2; ++rank) {
    workload::Task t;
    t.work = k;
    t.rank = rank;
    kernels.push_back(g.add(t));
  }
  for (int rank = 0; rank < 2; ++rank) {
    workload::Task t;
    t.work = ar;
    t.rank = rank;
    t.stream = workload::Stream::kDpComm;
    t.category = workload::Category::kAllReduce;
    t.deps = {kernels[static_cast<std::size_t>(rank)]};
    g.share_collective(g.add(t), 7);
  }
  const FlopRate one(1.0);
  const FlopRate two(2.0);
  net::AnalyticBackend backend{std::make_unique<testing::BytesAreSeconds>()};
  exec::Executor e(one, backend, hw::Precision::kBf16);
  e.set_pools({{&one, {}, {}}, {&two, {}, {}}}, {{1, 1}});
  core::Simulator sim;
  const exec::Timeline tl = e.run(g, sim);
  EXPECT_EQ(tl.makespan, core::from_seconds(5.0));
  for (const auto& span : tl.spans)
    if (span.task == kernels[1]) {
      EXPECT_EQ(span.end, core::from_seconds(2.0));
    }
}

TEST(MixedCluster, EachPoolsNodesGetItsOwnLinks) {
  const config::Scenario s = mixed("A100-SXM4-80GB", 1, "H100-SXM5-80GB", 1, kEighty, R"("tp": 8)");
  const net::Topology t = net::build_topology(s.cluster);
  const hw::GpuPool& a = s.cluster.pools[0];
  const hw::GpuPool& h = s.cluster.pools[1];
  EXPECT_DOUBLE_EQ(t.link(t.gpu_up(0)).capacity, a.intra_node.bandwidth * a.intra_node.bandwidth_efficiency);
  EXPECT_DOUBLE_EQ(t.link(t.gpu_up(8)).capacity, h.intra_node.bandwidth * h.intra_node.bandwidth_efficiency);
  const double eff = s.cluster.inter_node.bandwidth_efficiency;
  EXPECT_DOUBLE_EQ(t.link(t.nic_uplink(0, 0)).capacity, 25e9 * eff);
  EXPECT_DOUBLE_EQ(t.link(t.nic_uplink(1, 0)).capacity, 50e9 * eff);
  // A100's switch has no in-switch reduction: none for the mixed cluster.
  EXPECT_FALSE(t.in_switch_reduction);
}

TEST(MixedCluster, PowerSumsEachPoolsGpusAndNodes) {
  const config::Scenario s = mixed("A100-SXM4-80GB", 2, "H100-SXM5-80GB", 1, kEighty, R"("tp": 8)");
  const hw::PowerDraw p = hw::power_draw(s.cluster, 0.5);
  // A100: 400 W TDP, 0 W idle (none published), 3300 W per node; H100: 700 W, 140 W, 4600 W.
  EXPECT_DOUBLE_EQ(p.running_w, 16.0 * (0.0 + 400.0 * 0.5) + 8.0 * (140.0 + 560.0 * 0.5));
  EXPECT_DOUBLE_EQ(p.idle_w, 8.0 * 140.0);
  EXPECT_DOUBLE_EQ(p.constant_w, 2.0 * 3300.0 + 4600.0);
}

TEST(MixedCluster, FasterDataParallelReplicasWaitForTheSlowOnes) {
  // Pure data parallelism on one A100 node and one H100 node takes exactly as long
  // as on two A100 nodes: every step waits for the A100 replica's gradients, and
  // the ring's slowest links (the A100 node's NICs and NVLink) are the same.
  const std::string text = R"({"cluster": {"gpu": "A100-SXM4-80GB", "num_nodes": 2}, "model": )" + kEighty +
                           R"(, "training": {"global_batch_size": 96}, "parallelism": {"tp": 8}})";
  const config::Scenario a100 = scenario::parse_scenario_text(text, "a100.json");
  const config::Scenario both = mixed("A100-SXM4-80GB", 1, "H100-SXM5-80GB", 1, kEighty, R"("tp": 8)");
  const exec::SimulationOutput one = exec::simulate(a100);
  const exec::SimulationOutput two = exec::simulate(both);
  EXPECT_EQ(two.stage_pools, std::vector<int>{0});
  EXPECT_EQ(two.timeline.makespan, one.timeline.makespan);
  // The H100 replica alone (its pool 1 hardware for the simulated rank) is faster.
  const std::string h100 = R"({"cluster": {"gpu": "H100-SXM5-80GB", "num_nodes": 2}, "model": )" + kEighty +
                           R"(, "training": {"global_batch_size": 96}, "parallelism": {"tp": 8}})";
  EXPECT_LT(exec::simulate(scenario::parse_scenario_text(h100, "h100.json")).timeline.makespan,
            one.timeline.makespan);
}

TEST(MixedCluster, ProportionalSharesMinimizeTheSlowestReplica) {
  // 10 micro-batches for a replica at 1 s each and one at 3 s: (8, 2) takes
  // max(8, 6) = 8 s; (7, 3) 9 s, (9, 1) 9 s.
  EXPECT_EQ(workload::proportional_microbatches(10, {1.0, 3.0}), (std::vector<long long>{8, 2}));
  // Alike replicas share evenly, the remainder to the first.
  EXPECT_EQ(workload::proportional_microbatches(7, {2.0, 2.0, 2.0}), (std::vector<long long>{3, 2, 2}));
  EXPECT_THROW((void)workload::proportional_microbatches(2, {1.0, 1.0, 1.0}), std::invalid_argument);
}

TEST(MixedCluster, AProportionalSplitRunsThePacingReplicasShareOfTheSameWork) {
  // Data parallelism over an A100 node and an H100 node, 96 micro-batches: the
  // H100 replica takes more of them, so the A100 one, which still sets the pace,
  // runs fewer than half; the job's work is unchanged and it is faster than with
  // even shares (where the H100 replica waits).
  const config::Scenario even = mixed("A100-SXM4-80GB", 1, "H100-SXM5-80GB", 1, kEighty, R"("tp": 8)");
  const config::Scenario shared =
      mixed("A100-SXM4-80GB", 1, "H100-SXM5-80GB", 1, kEighty, R"("tp": 8, "batch_split": "proportional")");
  ASSERT_TRUE(shared.parallel.replica_microbatches.has_value());
  EXPECT_LT(*shared.parallel.replica_microbatches, 48);
  EXPECT_EQ(shared.parallel.replica_stage_pools, std::vector<int>{0});
  const workload::IterationWork a = workload::iteration_work(even.model, even.training, even.parallel);
  const workload::IterationWork b = workload::iteration_work(shared.model, shared.training, shared.parallel);
  EXPECT_EQ(a.tokens, b.tokens);
  EXPECT_DOUBLE_EQ(a.model_flops, b.model_flops);
  EXPECT_LT(exec::simulate(shared).timeline.makespan, exec::simulate(even).timeline.makespan);
  expect_refused(R"({"cluster": {"gpu": "H100-SXM5-80GB", "num_nodes": 2}, "model": )" + kEighty +
                     R"(, "training": {"global_batch_size": 96}, "parallelism": {"tp": 8, "batch_split": "proportional"}})",
                 "/parallelism/batch_split", "needs a mixed cluster");
}

TEST(MixedCluster, ProportionalSharesNeedOnlyWholeMicroBatches) {
  // 97 micro-batches over two replicas: no even split exists, the shares run.
  const config::Scenario s = mixed("A100-SXM4-80GB", 1, "H100-SXM5-80GB", 1, kEighty,
                                   R"("tp": 8, "batch_split": "proportional")", "", "");
  config::Scenario odd = s;
  odd.training.global_batch_size = 97;
  scenario::resolve_mixed_cluster(odd);
  ASSERT_TRUE(odd.parallel.replica_microbatches.has_value());
  EXPECT_GT(exec::simulate(odd).timeline.makespan, 0);
  // A billion micro-batches are shared at once, not one by one.
  const std::vector<long long> m = workload::proportional_microbatches(1'000'000'000, {1.0, 3.0});
  EXPECT_EQ(m, (std::vector<long long>{750'000'000, 250'000'000}));
}

TEST(MixedCluster, OffloadHoldsEveryPoolToTheWeakestHost) {
  // ZeRO-Offload needs every pool's host Adam rate: the A100 pool has none.
  const std::string text = R"({"cluster": {"pools": [{"gpu": "H100-SXM5-80GB", "num_nodes": 1, "host": {"cpu_adam_rate": 2e9}},
      {"gpu": "A100-SXM4-80GB", "num_nodes": 1}]}, "model": )" + kEighty +
                           R"(, "training": {"global_batch_size": 2, "micro_batch_size": 1},
      "parallelism": {"tp": 8, "zero_stage": 2, "offload_optimizer": "cpu"}})";
  expect_refused(text, "/parallelism/offload_optimizer", "cpu_adam_rate");
  // The least per-GPU copy rate: A100's 25 GB/s shared by 2 GPUs per link, H100's 55.05 alone.
  const config::Scenario s = mixed("H100-SXM5-80GB", 1, "A100-SXM4-80GB", 1, kEighty, R"("tp": 8)");
  EXPECT_DOUBLE_EQ(s.cluster.host.host_to_device_per_gpu(), 25e9 / 2.0);
}

TEST(MixedCluster, TheSwitchesAreSizedForTheFastestNics) {
  // 8 A100 (200 Gb/s) then 8 H100 (400 Gb/s) nodes, 128 NICs on a two-tier fat tree:
  // the fabric above the NICs is the H100's, so only each pool's own NIC cables differ.
  const config::Scenario s = mixed("A100-SXM4-80GB", 8, "H100-SXM5-80GB", 8, kEighty, R"("tp": 8)");
  hw::ClusterSpec fast = s.cluster;
  fast.pools.clear();
  fast.gpu = s.cluster.pools[1].gpu;
  fast.intra_node = s.cluster.pools[1].intra_node;
  fast.inter_node.nic_bandwidth = s.cluster.pools[1].nic_bandwidth;
  const net::Topology mixed_t = net::build_topology(s.cluster);
  const net::Topology fast_t = net::build_topology(fast);
  ASSERT_EQ(mixed_t.num_links(), fast_t.num_links());
  int fabric = 0;
  for (std::uint32_t l = 0; l < mixed_t.num_links(); ++l)
    if (mixed_t.link(l).kind == net::LinkKind::kFabric) {
      ++fabric;
      EXPECT_DOUBLE_EQ(mixed_t.link(l).capacity, fast_t.link(l).capacity) << mixed_t.link_name(l);
    }
  EXPECT_GT(fabric, 0);
  // An A100 node's NIC cable is its own 200 Gb/s.
  EXPECT_DOUBLE_EQ(mixed_t.link(mixed_t.nic_uplink(0, 0)).capacity,
                   25e9 * s.cluster.inter_node.bandwidth_efficiency);
}

TEST(MixedCluster, APlanSetsTheMixedJobAgainstItsPoolsAsSeparateJobs) {
  // One A100 node, one H100 node, and both in one job: the plan says how many tokens
  // a second the two separate jobs make together, against the mixed job's.
  const std::string text = R"({"name": "mixed", "model": )" + kEighty + R"(,
     "training": {"global_batch_size": 16, "train_tokens": 1e9},
     "clusters": [{"name": "A", "gpu": "A100-SXM4-80GB", "num_nodes": 1, "price_per_gpu_hour": 1},
                  {"name": "H", "gpu": "H100-SXM5-80GB", "num_nodes": 1, "price_per_gpu_hour": 3},
                  {"name": "A+H", "pools": [{"gpu": "A100-SXM4-80GB", "num_nodes": 1, "price_per_gpu_hour": 1},
                                            {"gpu": "H100-SXM5-80GB", "num_nodes": 1, "price_per_gpu_hour": 3}]}],
     "space": {"tp": [8], "pp": [1, 2], "mbs": 1, "network_model": "analytic"}})";
  const config::SweepSpec spec = scenario::parse_sweep_spec(text, "mixed-plan.json");
  sweep::Enumeration e = sweep::enumerate(spec);
  std::vector<sweep::PointResult> r = sweep::evaluate_points(spec, e.candidates, 1);
  const sweep::Outcome o = sweep::summarize(spec, std::move(e), std::move(r));
  // The best (fastest) point of each option, found here as the plan finds it.
  std::vector<double> best(3, 0.0);
  for (std::size_t i = 0; i < o.results.size(); ++i)
    if (o.results[i].status == sweep::Status::kEvaluated) {
      double& b = best[static_cast<std::size_t>(o.points[i].cluster)];
      b = std::max(b, o.results[i].tokens_per_s);
    }
  ASSERT_GT(best[2], 0.0);
  const std::string line = fmt::format("A+H: {:.0f} tokens/s as one job", best[2]);
  const std::string table = sweep::plan_table(spec, o);
  EXPECT_NE(table.find(line), std::string::npos) << table;
  EXPECT_NE(table.find(fmt::format("separate jobs (A, H) {:.0f} tokens/s together ({:+.0f}%)", best[0] + best[1],
                                   100.0 * ((best[0] + best[1]) / best[2] - 1.0))),
            std::string::npos)
      << table;
}

}  // namespace
}  // namespace trainsim
