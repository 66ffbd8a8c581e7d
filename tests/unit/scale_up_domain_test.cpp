// Scale-up domains that span several nodes (docs/model.md, "Scale-up domains"):
// the network's nodes are the domains, a node stays the server (host, power,
// NICs, failures). Closed forms on the round-figure clusters of network_fixtures.h:
// NVLink 400 GB/s, NICs 50 GB/s, 2 us per step inside a domain, 10 us between.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include <fmt/format.h>

#include "hardware/power.h"
#include "network/collective_engine.h"
#include "network/topology_builders.h"
#include "network_fixtures.h"
#include "report/collective_table.h"
#include "scenario/cluster_file.h"
#include "scenario/errors.h"
#include "scenario/reader.h"
#include "workload/layout.h"

namespace trainsim {
namespace {

using ::testing::HasSubstr;
using net::Algorithm;
using net::CollectiveKind;
using net::CollectivePlanner;

constexpr double kS = 1e9;  // bytes

core::Time ns(double seconds) { return static_cast<core::Time>(seconds * 1e9 + 0.5); }

net::Collective all_reduce(int domains, int per_domain, double bytes) {
  return {CollectiveKind::kAllReduce, bytes, {domains * per_domain, domains, per_domain, nullptr}};
}

// 4 servers of 4 GPUs and 1 NIC, two per NVLink domain.
hw::ClusterSpec two_domains_of_two_servers() {
  hw::ClusterSpec c = testing::round_cluster(4, 4, 1);
  c.nodes_per_domain = 2;
  return c;
}

TEST(ScaleUpDomain, TheNetworkSeesDomainsWithAllTheirServersNics) {
  const hw::ClusterSpec c = two_domains_of_two_servers();
  EXPECT_EQ(c.num_domains(), 2);
  EXPECT_EQ(c.gpus_per_domain(), 8);
  EXPECT_EQ(c.nics_per_domain(), 2);
  const net::Topology t = net::build_topology(c);
  EXPECT_EQ(t.num_nodes(), 2);
  EXPECT_EQ(t.gpus_per_node(), 8);
  EXPECT_EQ(t.nics_per_node(), 2);
  // GPU 5 (server 1's second GPU) sends through NIC 5 x 2 / 8 = 1 of its domain:
  // its own server's NIC.
  EXPECT_EQ(t.rail_of_gpu(5), 1);
}

TEST(ScaleUpDomain, HierarchicalRingAcrossTwoDomainsStepsOverNvlinkBetweenServers) {
  // Latency of an empty all-reduce over 16 ranks. Flat ring: 2 x 15 steps of the
  // slowest (inter-domain, 10 us) path, 300 us, with or without domains.
  // Hierarchical inside 8-GPU domains: 7 + 7 NVLink steps of 2 us and 2 steps
  // between the two domains, 48 us. With each 4-GPU server its own domain:
  // 3 + 3 NVLink steps and 2 x 3 steps over 4 servers, 72 us.
  const hw::ClusterSpec domains = two_domains_of_two_servers();
  const net::Topology t = net::build_topology(domains);
  CollectivePlanner ring(t, Algorithm::kRing);
  CollectivePlanner hier(t, Algorithm::kHierarchical);
  EXPECT_EQ(ring.plan(all_reduce(2, 8, 0.0)).duration(0.0), ns(300e-6));
  EXPECT_EQ(hier.plan(all_reduce(2, 8, 0.0)).duration(0.0), ns(48e-6));

  const net::Topology servers = net::build_topology(testing::round_cluster(4, 4, 1));
  CollectivePlanner hier_servers(servers, Algorithm::kHierarchical);
  EXPECT_EQ(hier_servers.plan(all_reduce(4, 4, 0.0)).duration(0.0), ns(72e-6));
}

TEST(ScaleUpDomain, TwoServersPerDomainPriceAsOneServerOfTheirGpusAndNics) {
  // 2 domains of 2 x (4 GPUs, 1 NIC) are, to the network, 2 nodes of 8 GPUs and
  // 2 NICs: every collective takes the same time on both.
  const net::Topology a = net::build_topology(two_domains_of_two_servers());
  const net::Topology b = net::build_topology(testing::round_cluster(2, 8, 2));
  for (Algorithm alg : {Algorithm::kRing, Algorithm::kHierarchical}) {
    CollectivePlanner pa(a, alg);
    CollectivePlanner pb(b, alg);
    EXPECT_EQ(pa.plan(all_reduce(2, 8, kS)).duration(kS), pb.plan(all_reduce(2, 8, kS)).duration(kS));
  }
}

TEST(ScaleUpDomain, ScenarioKeyTakesWholeServersAndWholeDomains) {
  const auto cluster = [](const std::string& fields) {
    return scenario::parse_cluster_text(R"({"gpu": "H100-SXM5-80GB", "gpus_per_node": 4, )" + fields + "}",
                                        "c.json");
  };
  // An NVL72-like rack: 18 servers of 4 GPUs.
  const hw::ClusterSpec rack = cluster(R"("num_nodes": 36, "scale_up_domain": 72)");
  EXPECT_EQ(rack.nodes_per_domain, 18);
  EXPECT_EQ(rack.num_domains(), 2);
  // Fewer servers than a domain: they all share its switches.
  EXPECT_EQ(cluster(R"("num_nodes": 2, "scale_up_domain": 72)").nodes_per_domain, 2);
  // A tensor-parallel group of 8 over two servers is one NVLink group.
  const net::CommGroup g = report::collective_group(rack, 8);
  EXPECT_EQ(g.nodes, 1);
  EXPECT_EQ(g.ranks_per_node, 8);

  const auto error_of = [&](const std::string& fields) {
    try {
      (void)cluster(fields);
    } catch (const scenario::ScenarioError& e) {
      return e.json_path() + ": " + e.what();
    }
    return std::string("no error");
  };
  EXPECT_THAT(error_of(R"("num_nodes": 20, "scale_up_domain": 72)"),
              HasSubstr("/num_nodes: 20 nodes span scale-up domains of 18 nodes (72 GPUs), so they take "
                        "whole ones: a multiple of 18 nodes"));
  EXPECT_THAT(error_of(R"("num_nodes": 18, "scale_up_domain": 70)"),
              HasSubstr("a scale-up domain of 70 GPUs is not a whole number of 4-GPU nodes"));
  EXPECT_THAT(error_of(R"("num_nodes": 36, "scale_up_domain": 72, "inter_node": {"topology": "custom"})"),
              HasSubstr("a custom topology names the NICs of nodes"));
}

TEST(ScaleUpDomain, Gb200PresetIsRacksOfEighteenTrays) {
  // scenarios/hardware/GB200.json: 4-GPU trays, one ConnectX-7 (400 Gb/s) each GPU,
  // 72-GPU NVLink domains at NVLink 5's 900 GB/s x B200's ring efficiency 0.723.
  const hw::ClusterSpec c = scenario::parse_cluster_text(R"({"gpu": "GB200", "num_nodes": 36})", "c.json");
  EXPECT_EQ(c.gpus_per_node, 4);
  EXPECT_EQ(c.nodes_per_domain, 18);
  EXPECT_EQ(c.num_domains(), 2);
  EXPECT_EQ(c.nics_per_domain(), 72);
  EXPECT_DOUBLE_EQ(c.nvlink_bandwidth(), 900e9 * 0.723);
  EXPECT_DOUBLE_EQ(c.nic_bandwidth_per_gpu(), 50e9 * 0.94);
  EXPECT_DOUBLE_EQ(c.gpu.peak(hw::Precision::kBf16), 2.5e15);
  EXPECT_FALSE(c.gpu.efficiency_basis.empty());
  const net::Topology t = net::build_topology(c);
  EXPECT_EQ(t.num_nodes(), 2);
  EXPECT_EQ(t.gpus_per_node(), 72);
}

TEST(ScaleUpDomain, ModelParallelBlocksLieInsideDomainsOrSpanWholeOnes) {
  EXPECT_TRUE(workload::model_blocks_align(8, 1, 72));    // 9 TP groups a rack
  EXPECT_FALSE(workload::model_blocks_align(16, 1, 72));  // ranks 64-79 straddle two racks
  EXPECT_TRUE(workload::model_blocks_align(8, 9, 72));    // a TP x CP block is a rack
  EXPECT_FALSE(workload::model_blocks_align(8, 16, 72));  // 128 ranks: a rack and 56 of the next
  EXPECT_TRUE(workload::model_blocks_align(8, 1, 4));     // TP 8 over two whole 4-GPU trays
  EXPECT_TRUE(workload::model_blocks_align(16, 1, 64));   // Megatron-Bridge's 64-GPU segments

  const auto error_of = [](int nodes, int tp, int cp) {
    const std::string text = fmt::format(
        R"({{"cluster": {{"gpu": "GB200", "num_nodes": {}}}, "model": "gpt3-175b",
            "training": {{"global_batch_size": 1152}},
            "parallelism": {{"tensor_model_parallel_size": {}, "context_parallel_size": {},
                            "pipeline_model_parallel_size": 1, "data_parallel_size": "auto"}}}})",
        nodes, tp, cp);
    try {
      (void)scenario::parse_scenario_text(text, "s.json");
    } catch (const scenario::ScenarioError& e) {
      return e.json_path() + ": " + e.what();
    }
    return std::string("no error");
  };
  EXPECT_THAT(error_of(36, 16, 1), HasSubstr("/parallelism/tensor_model_parallel_size"));
  EXPECT_THAT(error_of(36, 16, 1), HasSubstr("tensor-parallel groups of 16 straddle the 72-GPU scale-up domains"));
  EXPECT_THAT(error_of(288, 8, 16), HasSubstr("/parallelism/context_parallel_size"));
  EXPECT_THAT(error_of(36, 8, 1), HasSubstr("no error"));
}

TEST(ScaleUpDomain, AMeshFabricCannotSpanServers) {
  try {
    (void)scenario::parse_cluster_text(R"({"gpu": "MI300X", "num_nodes": 2, "scale_up_domain": 16})", "c.json");
    FAIL() << "accepted";
  } catch (const scenario::ScenarioError& e) {
    EXPECT_EQ(e.json_path(), "/intra_node/fabric");
    EXPECT_THAT(std::string(e.what()), HasSubstr("a mesh joins the GPUs of one node link by link"));
  }
}

TEST(ScaleUpDomain, PowerCountsServersNotDomains) {
  // The node overhead is a server's: 36 trays pay it 36 times however the
  // NVLink switches join them.
  hw::ClusterSpec c = testing::round_cluster(36, 4, 1);
  c.gpu.tdp_watts = 1000.0;
  c.gpu.node_overhead_watts = 500.0;
  c.nodes_per_domain = 18;
  EXPECT_DOUBLE_EQ(hw::power_draw(c, 1.0, 0).constant_w, 36 * 500.0);
}

}  // namespace
}  // namespace trainsim
