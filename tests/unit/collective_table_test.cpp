// `trainsim collective`: sizes, counts and bandwidths as nccl-tests defines them,
// and times derived by hand from the H100 preset (scenarios/hardware/H100-SXM5-80GB.json):
// NVLink 450 GB/s per GPU per direction at efficiency 0.822, 1.83 us per ring step.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "scenario/cluster_file.h"
#include "scenario/collective_options.h"
#include "report/collective_table.h"
#include "scenario/errors.h"

namespace trainsim::report {
namespace {
using scenario::collective_kind_from_string;
using scenario::parse_byte_size;
using scenario::parse_cluster_text;

using ::testing::HasSubstr;
using net::CollectiveKind;

constexpr double kNvlink = 450e9 * 0.822;  // B/s a GPU drives over NVLink
constexpr double kBuffer = 4.0 * 1024 * 1024;  // B, the ring buffer (NCCL_BUFFSIZE)
constexpr double kStep = 1.83e-6;          // s per ring step inside a node
constexpr std::uint64_t kGiB = 1ULL << 30;

hw::ClusterSpec h100(int nodes) {
  return parse_cluster_text(R"({"gpu": "H100-SXM5-80GB", "num_nodes": )" + std::to_string(nodes) + "}", "c.json");
}

// One size, alone on the network.
CollectiveRow one_row(const hw::ClusterSpec& cluster, CollectiveKind kind, std::uint64_t bytes, int gpus,
                      net::Algorithm algorithm, CollectiveNetworkModel model) {
  CollectiveTableOptions o;
  o.kind = kind;
  o.min_bytes = o.max_bytes = bytes;
  o.gpus = gpus;
  o.algorithm = algorithm;
  o.model = model;
  const CollectiveTable t = collective_table(cluster, o);
  EXPECT_EQ(t.rows.size(), 1u);
  return t.rows.at(0);
}

// steps x the step latency, then the bandwidth term rounded up to the ns (collective_engine.h).
double expected_ns(int steps, double seconds) {
  return std::round(steps * kStep * 1e9) + std::ceil(seconds * 1e9);
}

TEST(CollectiveTable, RingAllReduceOnOneNodeOfH100) {
  const double s = static_cast<double>(8 * kGiB);
  // Ring all_reduce over n = 8: 2(n-1) = 14 steps; every GPU sends 2(n-1)/n x S.
  const CollectiveRow r = one_row(h100(1), CollectiveKind::kAllReduce, 8 * kGiB, 0, net::Algorithm::kRing,
                                  CollectiveNetworkModel::kAnalytic);
  EXPECT_EQ(r.algorithm, net::Algorithm::kRing);
  EXPECT_EQ(r.bytes, 8 * kGiB);
  EXPECT_EQ(r.count, 8 * kGiB / 4);
  // Slices of S/8 = 1 GiB exceed the 4 MiB ring buffer: 13 steps wait for 4 MiB each.
  EXPECT_NEAR(static_cast<double>(r.time), expected_ns(14, (2.0 * 7 / 8 * s + 13 * kBuffer) / kNvlink), 1.0);
  const double algbw = s / (static_cast<double>(r.time) * 1e-9) / 1e9;
  EXPECT_DOUBLE_EQ(r.algbw, algbw);
  EXPECT_DOUBLE_EQ(r.busbw, algbw * 2.0 * 7 / 8);
  // At 8 GiB latency and pipeline fill are 0.4% of the time: busbw is within
  // 0.5% of the NVLink figure (nccl-tests' ~370 GB/s).
  EXPECT_NEAR(r.busbw, kNvlink / 1e9, 0.005 * kNvlink / 1e9);
}

TEST(CollectiveTable, FlowModelAgreesWithAnalyticAloneOnOneNode) {
  // Every NVLink carries one ring flow: max-min sharing drains it at full capacity.
  const hw::ClusterSpec c = h100(1);
  for (CollectiveKind kind : {CollectiveKind::kAllReduce, CollectiveKind::kAllGather, CollectiveKind::kBroadcast}) {
    SCOPED_TRACE(std::string(net::to_string(kind)));
    const CollectiveRow a = one_row(c, kind, kGiB, 0, net::Algorithm::kRing, CollectiveNetworkModel::kAnalytic);
    const CollectiveRow f = one_row(c, kind, kGiB, 0, net::Algorithm::kRing, CollectiveNetworkModel::kFlow);
    EXPECT_NEAR(static_cast<double>(f.time), static_cast<double>(a.time), 1.0);
  }
}

TEST(CollectiveTable, RingAllGatherAndBroadcastTimes) {
  const hw::ClusterSpec c = h100(1);
  const double s = static_cast<double>(kGiB);
  // all_gather: n-1 = 7 steps, (n-1)/n x S per GPU; busbw = algbw x 7/8.
  const CollectiveRow ag =
      one_row(c, CollectiveKind::kAllGather, kGiB, 0, net::Algorithm::kRing, CollectiveNetworkModel::kAnalytic);
  EXPECT_NEAR(static_cast<double>(ag.time), expected_ns(7, (7.0 / 8 * s + 6 * kBuffer) / kNvlink), 1.0);
  EXPECT_EQ(ag.count, kGiB / 4 / 8);  // nccl-tests passes the count per rank
  EXPECT_DOUBLE_EQ(ag.busbw, ag.algbw * 7 / 8);
  // broadcast: a chain of n-1 = 7 steps, S on every link, no ring pipeline; busbw = algbw.
  const CollectiveRow bc =
      one_row(c, CollectiveKind::kBroadcast, kGiB, 0, net::Algorithm::kRing, CollectiveNetworkModel::kAnalytic);
  EXPECT_NEAR(static_cast<double>(bc.time), expected_ns(7, s / kNvlink), 1.0);
  EXPECT_DOUBLE_EQ(bc.busbw, bc.algbw);
}

TEST(CollectiveTable, SendRecvBetweenTwoGpus) {
  // -g 2: GPU 0 sends S to GPU 1 over NVLink, one step.
  const CollectiveRow r = one_row(h100(1), CollectiveKind::kSendRecv, kGiB, 2, net::Algorithm::kAuto,
                                  CollectiveNetworkModel::kAnalytic);
  EXPECT_NEAR(static_cast<double>(r.time), expected_ns(1, static_cast<double>(kGiB) / kNvlink), 1.0);
  EXPECT_DOUBLE_EQ(r.busbw, r.algbw);
}

TEST(CollectiveTable, BusFactorsAreNcclTests) {
  EXPECT_DOUBLE_EQ(bus_factor(CollectiveKind::kAllReduce, 8), 1.75);
  EXPECT_DOUBLE_EQ(bus_factor(CollectiveKind::kAllGather, 8), 0.875);
  EXPECT_DOUBLE_EQ(bus_factor(CollectiveKind::kReduceScatter, 8), 0.875);
  EXPECT_DOUBLE_EQ(bus_factor(CollectiveKind::kAllToAll, 4), 0.75);
  EXPECT_DOUBLE_EQ(bus_factor(CollectiveKind::kBroadcast, 8), 1.0);
  EXPECT_DOUBLE_EQ(bus_factor(CollectiveKind::kReduce, 8), 1.0);
  EXPECT_DOUBLE_EQ(bus_factor(CollectiveKind::kSendRecv, 2), 1.0);
}

TEST(CollectiveTable, SizesRoundDownAsNcclTests) {
  using V = std::vector<std::uint64_t>;
  EXPECT_EQ(collective_sizes(CollectiveKind::kAllReduce, 8, 8, 64, 2), (V{8, 16, 32, 64}));
  // Whole floats: 10 -> 8, 30 -> 28, 90 -> 88; 270 passes 100.
  EXPECT_EQ(collective_sizes(CollectiveKind::kAllReduce, 8, 10, 100, 3), (V{8, 28, 88}));
  // Split among 8 ranks: multiples of 32 bytes; 8 and 16 round to nothing and are left out.
  EXPECT_EQ(collective_sizes(CollectiveKind::kAllGather, 8, 8, 128, 2), (V{32, 64, 128}));
  EXPECT_EQ(collective_sizes(CollectiveKind::kReduceScatter, 8, 100, 1000, 3), (V{96, 288, 896}));
  EXPECT_EQ(collective_sizes(CollectiveKind::kAllToAll, 4, 100, 100, 2), (V{96}));
  // -b 8 -e 8G -f 2: 2^3 .. 2^33, 31 sizes.
  EXPECT_EQ(collective_sizes(CollectiveKind::kAllReduce, 8, 8, 8 * kGiB, 2).size(), 31u);
  EXPECT_THROW(collective_sizes(CollectiveKind::kAllReduce, 8, 64, 8, 2), std::invalid_argument);
  EXPECT_THROW(collective_sizes(CollectiveKind::kAllReduce, 8, 8, 64, 1), std::invalid_argument);
  EXPECT_THROW(collective_sizes(CollectiveKind::kAllReduce, 8, 0, 64, 2), std::invalid_argument);
}

TEST(CollectiveTable, CountsArePerRankWhereNcclTestsSplitsTheBuffer) {
  CollectiveTableOptions o;
  o.min_bytes = o.max_bytes = 96;
  o.model = CollectiveNetworkModel::kAnalytic;
  for (auto [kind, count] : {std::pair{CollectiveKind::kAllReduce, 24u}, std::pair{CollectiveKind::kAllGather, 3u},
                             std::pair{CollectiveKind::kReduceScatter, 3u}, std::pair{CollectiveKind::kAllToAll, 3u},
                             std::pair{CollectiveKind::kBroadcast, 24u}}) {
    SCOPED_TRACE(std::string(net::to_string(kind)));
    o.kind = kind;
    const CollectiveTable t = collective_table(h100(1), o);
    ASSERT_EQ(t.rows.size(), 1u);
    EXPECT_EQ(t.rows[0].bytes, 96u);
    EXPECT_EQ(t.rows[0].count, count);
  }
}

TEST(CollectiveTable, ByteSizesTakePowersOf1024) {
  EXPECT_EQ(parse_byte_size("8"), 8u);
  EXPECT_EQ(parse_byte_size("64K"), 65536u);
  EXPECT_EQ(parse_byte_size("1k"), 1024u);
  EXPECT_EQ(parse_byte_size("128M"), 128u << 20);
  EXPECT_EQ(parse_byte_size("8G"), 8 * kGiB);
  EXPECT_EQ(parse_byte_size("1T"), 1ULL << 40);
  for (const char* bad : {"", "G", "8X", "8GB", "-1", "1.5M", " 8", "99999999999T"}) {
    SCOPED_TRACE(bad);
    EXPECT_FALSE(parse_byte_size(bad).has_value());
  }
}

TEST(CollectiveTable, OperationNamesOfTrainsimAndNcclTests) {
  EXPECT_EQ(collective_kind_from_string("all_reduce"), CollectiveKind::kAllReduce);
  EXPECT_EQ(collective_kind_from_string("allreduce"), CollectiveKind::kAllReduce);
  EXPECT_EQ(collective_kind_from_string("reducescatter"), CollectiveKind::kReduceScatter);
  EXPECT_EQ(collective_kind_from_string("alltoall"), CollectiveKind::kAllToAll);
  EXPECT_EQ(collective_kind_from_string("sendrecv"), CollectiveKind::kSendRecv);
  EXPECT_FALSE(collective_kind_from_string("all-reduce").has_value());
}

TEST(CollectiveTable, GroupIsTheFirstRanksNodeByNode) {
  const hw::ClusterSpec c = h100(2);
  const net::CommGroup all = collective_group(c, 0);
  EXPECT_EQ(all.size, 16);
  EXPECT_EQ(all.nodes, 2);
  EXPECT_EQ(all.ranks_per_node, 8);
  const net::CommGroup part = collective_group(c, 4);
  EXPECT_EQ(part.size, 4);
  EXPECT_EQ(part.nodes, 1);
  EXPECT_EQ(part.ranks_per_node, 4);
  const net::CommGroup one_node = collective_group(c, 8);
  EXPECT_EQ(one_node.nodes, 1);
  EXPECT_EQ(one_node.ranks_per_node, 8);
}

TEST(CollectiveTable, BadGroupsSayWhy) {
  const hw::ClusterSpec c = h100(2);
  auto message = [&](int gpus) {
    try {
      (void)collective_group(c, gpus);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_THAT(message(12), HasSubstr("a multiple of 8 GPUs"));
  EXPECT_THAT(message(24), HasSubstr("a cluster of 16"));
  EXPECT_THAT(message(1), HasSubstr("at least 2"));
  const hw::ClusterSpec single = parse_cluster_text(R"({"gpu": "H100-SXM5-80GB", "num_nodes": 1, "gpus_per_node": 1})",
                                                    "c.json");
  EXPECT_THROW((void)collective_group(single, 0), std::invalid_argument);
}

TEST(CollectiveTable, ForcedAlgorithmThatCannotRunIsAnError) {
  CollectiveTableOptions o;
  o.kind = CollectiveKind::kAllGather;
  o.algorithm = net::Algorithm::kTree;
  try {
    (void)collective_table(h100(1), o);
    FAIL() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("all_reduce only"));
  }
}

TEST(CollectiveTable, AutoPicksAnAlgorithmPerSize) {
  CollectiveTableOptions o;
  o.min_bytes = 8;
  o.max_bytes = kGiB;
  o.model = CollectiveNetworkModel::kAnalytic;
  const CollectiveTable t = collective_table(h100(2), o);
  ASSERT_EQ(t.rows.size(), 28u);
  for (const CollectiveRow& r : t.rows) {
    EXPECT_NE(r.algorithm, net::Algorithm::kAuto);
    EXPECT_GT(r.time, 0);
  }
  EXPECT_GT(t.rows.back().busbw, t.rows.front().busbw);  // latency-bound at 8 B, bandwidth-bound at 1 GiB
}

TEST(CollectiveTable, FormatHasNcclTestsColumnsAndAverage) {
  CollectiveTableOptions o;
  o.kind = CollectiveKind::kBroadcast;
  o.min_bytes = 1024;
  o.max_bytes = 4096;
  o.algorithm = net::Algorithm::kRing;
  const hw::ClusterSpec c = h100(1);
  const CollectiveTable t = collective_table(c, o);
  ASSERT_EQ(t.rows.size(), 3u);
  const std::string text = format_collective_table(c, o, t);
  EXPECT_THAT(text, HasSubstr("H100-SXM5-80GB, 1 node x 8 GPUs; one node of 8 GPUs on nvswitch"));
  EXPECT_THAT(text, HasSubstr("flow"));
  for (const char* column : {"size", "count", "type", "redop", "root", "time", "algbw", "busbw", "algorithm"})
    EXPECT_THAT(text, HasSubstr(column));
  // 1024 B of floats, no reduction, root 0.
  EXPECT_THAT(text, ::testing::ContainsRegex("\n +1024 +256 +float +none +0 +[0-9.]+ +[0-9.]+ +[0-9.]+ +ring\n"));
  const double avg = (t.rows[0].busbw + t.rows[1].busbw + t.rows[2].busbw) / 3;
  EXPECT_DOUBLE_EQ(t.average_busbw, avg);
  EXPECT_THAT(text, HasSubstr("# Avg bus bandwidth    : "));
}

// --cluster: a cluster object alone, or a whole scenario.
TEST(ClusterFile, ClusterAloneOrInAScenario) {
  EXPECT_EQ(parse_cluster_text(R"({"gpu": "H100-SXM5-80GB", "num_nodes": 3})", "c.json").num_gpus(), 24);
  EXPECT_EQ(parse_cluster_text(R"({"gpu": "H100-SXM5-80GB", "num_nodes": 3, "gpus_per_node": 4})", "c.json")
                .num_gpus(),
            12);
  // A layout `run` does not simulate yet does not stop the collective table.
  const hw::ClusterSpec s = parse_cluster_text(R"({"cluster": {"gpu": "H100-SXM5-80GB", "num_nodes": 2},
      "model": "gpt2-124m", "training": {"global_batch_size": 16}, "parallelism": {"tp": 2}})",
                                               "s.json");
  EXPECT_EQ(s.num_gpus(), 16);
  // An inline GPU without a bf16 peak (the training precision's default).
  const hw::ClusterSpec inl = parse_cluster_text(R"({"num_nodes": 1, "gpus_per_node": 4,
      "gpu": {"name": "X1", "peak_flops": {"fp16": "100TFLOP/s"}, "memory_capacity": "16GiB",
              "memory_bandwidth": "900GB/s"}, "intra_node": {"bandwidth": "150GB/s", "latency": "3us"}})",
                                                 "c.json");
  EXPECT_EQ(inl.gpu.name, "X1");
  EXPECT_EQ(inl.num_gpus(), 4);
}

std::string error_of(const std::string& text) {
  try {
    (void)parse_cluster_text(text, "c.json");
  } catch (const scenario::ScenarioError& e) {
    return e.what();
  }
  return "no error";
}

TEST(ClusterFile, ErrorsNameTheFileAndThePathAsWritten) {
  EXPECT_THAT(error_of(R"({"gpu": "H100-SXM5-80G", "num_nodes": 1})"), HasSubstr("c.json: /gpu: "));
  EXPECT_THAT(error_of(R"({"gpu": "H100-SXM5-80GB", "num_nodes": 0})"), HasSubstr("c.json: /num_nodes: "));
  EXPECT_THAT(error_of(R"({"gpu": "H100-SXM5-80GB", "num_nodes": 1, "num_nodes": 2})"),
              HasSubstr("c.json: /num_nodes: "));
  EXPECT_THAT(error_of(R"({"gpu": "H100-SXM5-80GB"})"), HasSubstr("c.json: /num_nodes: "));
  EXPECT_THAT(error_of(R"({"gpu": "H100-SXM5-80GB", "num_nodes": 1,})"), HasSubstr("trailing comma"));
  EXPECT_THAT(error_of(R"({"cluster": {"gpu": "H100-SXM5-80GB", "num_nodes": -1}, "model": "gpt2-124m"})"),
              HasSubstr("c.json: /cluster/num_nodes: "));
}

}  // namespace
}  // namespace trainsim::report
