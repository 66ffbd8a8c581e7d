// The network model against published nccl-tests figures
// (../shared/validation/PUBLIC_DATA.md, section 2): all_reduce bus bandwidth at
// 8 GB on the shipped GPU presets, busbw = 2 (n-1)/n x S / t.
#include <gtest/gtest.h>

#include "core/simulator.h"
#include "network/collective_engine.h"
#include "network/topology_builders.h"
#include "scenario/reader.h"

namespace trainsim::net {
namespace {

hw::ClusterSpec preset_cluster(const std::string& gpu, int nodes) {
  const std::string text = R"({"cluster": {"gpu": ")" + gpu + R"(", "num_nodes": )" + std::to_string(nodes) +
                           R"(}, "model": "gpt2-124m", "training": {"global_batch_size": )" +
                           std::to_string(8 * nodes) + "}}";
  return scenario::parse_scenario_text(text, "validation.json").cluster;
}

// busbw in GB/s of an all_reduce of `bytes` over every GPU, at flow level.
double busbw(const hw::ClusterSpec& c, Algorithm a, double bytes) {
  const Topology t = build_topology(c);
  CollectivePlanner planner(t, a);
  FlowBackend flow(planner);
  core::Simulator sim;
  const int n = static_cast<int>(c.num_gpus());
  flow.start({CollectiveKind::kAllReduce, bytes, {n, c.num_nodes, c.gpus_per_node, nullptr}}, sim, [] {});
  sim.run();
  return bytes / core::to_seconds(sim.now()) * 2.0 * (n - 1) / n / 1e9;
}

constexpr double k8G = 8.0 * (1ULL << 30);

TEST(NetworkValidation, H100NodeNvlsAllReduceAt8GB) {
  // 478.87 GB/s (Azure AI benchmarking guide, NCCL 2.18.5, NVLS), within 5%.
  EXPECT_NEAR(busbw(preset_cluster("H100-SXM5-80GB", 1), Algorithm::kAuto, k8G), 478.87, 0.05 * 478.87);
}

TEST(NetworkValidation, H100NodeRingAllReduceAt8GB) {
  // About 370 GB/s with NVLS off (NVIDIA maintainer, nccl-tests #212), within 5%.
  EXPECT_NEAR(busbw(preset_cluster("H100-SXM5-80GB", 1), Algorithm::kRing, k8G), 370.0, 0.05 * 370.0);
}

TEST(NetworkValidation, H200NodeAllReduceAt8GB) {
  EXPECT_NEAR(busbw(preset_cluster("H200-SXM-141GB", 1), Algorithm::kAuto, k8G), 479.98, 0.05 * 479.98);
}

TEST(NetworkValidation, A100NodeAllReduceAt8GB) {
  // 231.58 GB/s (Azure guide, NCCL 2.18.5), within 5%.
  EXPECT_NEAR(busbw(preset_cluster("A100-SXM4-80GB", 1), Algorithm::kRing, k8G), 231.58, 0.05 * 231.58);
  EXPECT_NEAR(busbw(preset_cluster("A100-SXM4-80GB", 1), Algorithm::kAuto, k8G), 231.58, 0.05 * 231.58);
}

TEST(NetworkValidation, NdrNodesGive46To48GBsPerNic) {
  // Across nodes the ring's bus bandwidth is set by the NICs: 8 x NDR 400 Gb/s
  // per node give 46-48 GB/s each (nccl-tests #290, #160), so 368-384 GB/s per
  // GPU for 8 NICs and 8 GPUs. Four nodes, so NCCL would not pick its 2-node tree.
  const double bw = busbw(preset_cluster("H100-SXM5-80GB", 4), Algorithm::kRing, k8G) / 8.0;
  EXPECT_GE(bw, 46.0 * 0.95);
  EXPECT_LE(bw, 48.0 * 1.05);
}

}  // namespace
}  // namespace trainsim::net
