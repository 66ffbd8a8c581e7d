// nccl-tests output (text tables of several nccl-tests versions, and -J JSON) to
// profile rows, and the alpha-beta fit. The samples follow nccl-tests' printf
// formats (src/common.cu, src/util.cu and the old per-test print_header()s).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "nccl_tests_import.h"

namespace trainsim::calibrate {
namespace {

std::string join(const std::vector<std::string>& lines) {
  std::string s;
  for (const auto& l : lines) s += l + "\n";
  return s;
}

// The message of the runtime_error `f` throws ("" if none).
template <typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

// ---------------------------------------------------------------------------
// Samples

// all_reduce_perf -b 8 -e 256M -f 32 -g 8, nccl-tests of 2023 (common.cu: "#  Rank
// .. Group .." lines, "%5g" #wrong), with NCCL_DEBUG=INFO lines mixed in.
const std::vector<std::string> kAllReduce8Gpu = {
    "# nThread 1 nGpus 8 minBytes 8 maxBytes 268435456 step: 32(factor) warmup iters: 5 iters: 20 agg iters: 1 "
    "validation: 1 graph: 0",
    "#",
    "# Using devices",
    "#  Rank  0 Group  0 Pid  12345 on   node-001 device  0 [0x18] NVIDIA H100 80GB HBM3",
    "#  Rank  1 Group  0 Pid  12345 on   node-001 device  1 [0x2a] NVIDIA H100 80GB HBM3",
    "#  Rank  2 Group  0 Pid  12345 on   node-001 device  2 [0x3a] NVIDIA H100 80GB HBM3",
    "#  Rank  3 Group  0 Pid  12345 on   node-001 device  3 [0x5d] NVIDIA H100 80GB HBM3",
    "#  Rank  4 Group  0 Pid  12345 on   node-001 device  4 [0x9a] NVIDIA H100 80GB HBM3",
    "#  Rank  5 Group  0 Pid  12345 on   node-001 device  5 [0xab] NVIDIA H100 80GB HBM3",
    "#  Rank  6 Group  0 Pid  12345 on   node-001 device  6 [0xba] NVIDIA H100 80GB HBM3",
    "#  Rank  7 Group  0 Pid  12345 on   node-001 device  7 [0xdb] NVIDIA H100 80GB HBM3",
    "node-001:12345:12345 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>",
    "node-001:12345:12345 [0] NCCL INFO NCCL version 2.18.5+cuda12.2",
    "#",
    "#                                                              out-of-place                       in-place"
    "          ",
    "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw"
    " #wrong",
    "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)"
    "       ",
    "           8             2     float     sum      -1    18.51    0.00    0.00      0    18.05    0.00    0.00"
    "      0",
    "         256            64     float     sum      -1    18.87    0.01    0.02      0    18.66    0.01    0.02"
    "      0",
    "        8192          2048     float     sum      -1    19.95    0.41    0.72      0    19.71    0.42    0.73"
    "      0",
    "      262144         65536     float     sum      -1    27.80    9.43   16.50      0    27.52    9.53   16.67"
    "      0",
    "     8388608       2097152     float     sum      -1    62.37  134.50  235.37      0    61.90  135.52  237.16"
    "      0",
    "   268435456      67108864     float     sum      -1   1062.4  252.67  442.17      0   1059.8  253.29  443.26"
    "      0",
    "# Out of bounds values : 0 OK",
    "# Avg bus bandwidth    : 115.947 ",
    "#",
    "",
};
constexpr std::size_t kAllReduce8GpuFirstRowLine = 18;  // 1-based line of the 8-byte row

// all_gather_perf of the old nccl-tests (per-test header without redop and root,
// "%5.0le" error column, "#   Rank %2d Pid" lines), 4 GPUs.
const std::string kOldAllGather = join({
    "# nThread 1 nGpus 4 minBytes 1024 maxBytes 67108864 step: 1024(factor) warmup iters: 5 iters: 20 validation: 1 ",
    "#",
    "# Using devices",
    "#   Rank  0 Pid   4242 on   dgx-a100 device  0 [0x07] A100-SXM4-40GB",
    "#   Rank  1 Pid   4242 on   dgx-a100 device  1 [0x0f] A100-SXM4-40GB",
    "#   Rank  2 Pid   4242 on   dgx-a100 device  2 [0x47] A100-SXM4-40GB",
    "#   Rank  3 Pid   4242 on   dgx-a100 device  3 [0x4e] A100-SXM4-40GB",
    "#",
    "#                                             out-of-place                       in-place          ",
    "#       size         count    type     time   algbw   busbw  error     time   algbw   busbw  error",
    "#        (B)    (elements)             (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)       ",
    "        1024            64   float    12.48    0.08    0.06  0e+00    12.30    0.08    0.06  0e+00",
    "     1048576         65536   float    35.72   29.36   22.02  0e+00    35.10   29.87   22.41  0e+00",
    "    67108864       4194304   float   1201.5   55.85   41.89  0e+00   1199.8   55.93   41.95  2e-07",
    "# Out of bounds values : 0 OK",
    "# Avg bus bandwidth    : 21.3983 ",
});

// alltoall_perf of the old nccl-tests: the header has a redop column the rows leave
// blank; sizes too small for one element per rank print 0 bytes.
const std::string kOldAlltoall = join({
    "# nThread 1 nGpus 8 minBytes 0 maxBytes 1048576 step: 256(factor) warmup iters: 5 iters: 20 validation: 1 ",
    "#",
    "# Using devices",
    "#   Rank  0 Pid  31337 on     gpu-07 device  0 [0x1a] Tesla V100-SXM2-32GB",
    "#   Rank  1 Pid  31337 on     gpu-07 device  1 [0x1c] Tesla V100-SXM2-32GB",
    "#   Rank  2 Pid  31337 on     gpu-07 device  2 [0x1d] Tesla V100-SXM2-32GB",
    "#   Rank  3 Pid  31337 on     gpu-07 device  3 [0x1e] Tesla V100-SXM2-32GB",
    "#   Rank  4 Pid  31337 on     gpu-07 device  4 [0x3d] Tesla V100-SXM2-32GB",
    "#   Rank  5 Pid  31337 on     gpu-07 device  5 [0x3f] Tesla V100-SXM2-32GB",
    "#   Rank  6 Pid  31337 on     gpu-07 device  6 [0x40] Tesla V100-SXM2-32GB",
    "#   Rank  7 Pid  31337 on     gpu-07 device  7 [0x41] Tesla V100-SXM2-32GB",
    "#",
    "#                                                     out-of-place                       in-place          ",
    "#       size         count    type   redop     time   algbw   busbw  error     time   algbw   busbw  error",
    "#        (B)    (elements)                     (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)       ",
    "           0             0   float             0.23    0.00    0.00  0e+00     0.21    0.00    0.00  0e+00",
    "        4096           128   float            25.61    0.16    0.14  0e+00    25.80    0.16    0.14  0e+00",
    "     1048576         32768   float            61.20   17.13   14.99  0e+00    60.95   17.20   15.05  0e+00",
    "# Out of bounds values : 0 OK",
    "# Avg bus bandwidth    : 5.04333 ",
});

// alltoall_perf of a recent nccl-tests (util.cu: version and "Collective test
// starting" lines, "none"/-1 in redop/root, getFloatStr columns, in-place #wrong
// "N/A"), MPI over two nodes of 8 GPUs, 16 ranks; one size with wrong elements.
const std::string kModernAlltoall2Nodes = [] {
  std::vector<std::string> lines = {
      "# nccl-tests version 2.17.1 nccl-headers=22703 nccl-library=22703",
      "# Collective test starting: alltoall_perf",
      "# nThread 1 nGpus 1 minBytes 0 maxBytes 4294967296 step: 16384(factor) warmup iters: 1 iters: 20 agg iters: "
      "1 validation: 1 graph: 0",
      "#",
      "# Using devices",
  };
  for (int r = 0; r < 16; ++r) {
    const std::string host = r < 8 ? "node-001" : "node-002";
    const int dev = r % 8;
    lines.push_back("#  Rank " + std::string(r < 10 ? " " : "") + std::to_string(r) + " Group  0 Pid  " +
                    std::to_string(20000 + r) + " on   " + host + " device  " + std::to_string(dev) +
                    " [0000:1b:00] NVIDIA H100 80GB HBM3");
  }
  for (const char* l : {
           "#",
           "#                                                              out-of-place                       "
           "in-place          ",
           "#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw "
           "  busbw  #wrong ",
           "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)             (us)  (GB/s)"
           "  (GB/s)         ",
           "           0             0     float    none      -1     0.35    0.00    0.00       0     0.33    0.00 "
           "   0.00    N/A",
           "        1024            16     float    none      -1    41.07    0.02    0.02       0    40.88    0.03 "
           "   0.02    N/A",
           "    16777216        262144     float    none      -1   412.60   40.66   38.12       0   410.30   40.89 "
           "  38.33    N/A",
           "  4294967296      67108864     float    none      -1  97133.0   44.22   41.45  1.2e+06  97010.0   44.27 "
           "  41.51    N/A",
           "# Out of bounds values : 1 FAILED",
           "# Avg bus bandwidth    : 19.8975 ",
           "#",
           "# Collective test concluded: alltoall_perf",
       }) {
    lines.emplace_back(l);
  }
  return join(lines);
}();

// all_reduce_perf -d bfloat16 -S 1 (timestamps after the in-place group) over two
// nodes, two MPI processes of 8 GPUs each.
const std::string kAllReduce2NodesTimestamps = [] {
  std::vector<std::string> lines = {
      "# nccl-tests version 2.14.1 nccl-headers=22105 nccl-library=22105",
      "# Collective test starting: all_reduce_perf",
      "# nThread 1 nGpus 8 minBytes 1048576 maxBytes 2147483648 step: 128(factor) warmup iters: 5 iters: 20 agg "
      "iters: 1 validation: 1 graph: 0",
      "#",
      "# Using devices",
  };
  for (int r = 0; r < 16; ++r) {
    const std::string host = r < 8 ? "a3-0001" : "a3-0002";
    lines.push_back("#  Rank " + std::string(r < 10 ? " " : "") + std::to_string(r) + " Group  0 Pid  " +
                    std::to_string(r < 8 ? 777 : 888) + " on    " + host + " device  " + std::to_string(r % 8) +
                    " [0000:04:00] NVIDIA H100 80GB HBM3");
  }
  for (const char* l : {
           "#",
           "#                                                              out-of-place                       "
           "in-place          ",
           "#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw "
           "  busbw  #wrong           timestamp",
           "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)             (us)  (GB/s)"
           "  (GB/s)           %Y-%m-%d %H:%M:%S",
           "     1048576        524288  bfloat16     sum      -1    48.91   21.44   40.20       0    48.52   21.61 "
           "  40.52       0  2025-06-03 14:02:11",
           "   134217728      67108864  bfloat16     sum      -1   812.30  165.23  309.81       0   809.90  165.72 "
           " 310.73       0  2025-06-03 14:02:12",
           "  2147483648    1073741824  bfloat16     sum      -1  11873.0  180.87  339.13       0  11850.0  181.22 "
           " 339.79       0  2025-06-03 14:02:15",
           "# Out of bounds values : 0 OK",
           "# Avg bus bandwidth    : 229.697 ",
       }) {
    lines.emplace_back(l);
  }
  return join(lines);
}();

// sendrecv_perf -c 0: no validation, "#wrong" is N/A in both groups.
const std::string kSendRecvNoCheck = join({
    "# nThread 1 nGpus 2 minBytes 1024 maxBytes 268435456 step: 1024(factor) warmup iters: 5 iters: 20 agg iters: 1 "
    "validation: 0 graph: 0",
    "#",
    "# Using devices",
    "#  Rank  0 Group  0 Pid   5150 on  workstation device  0 [0x01] NVIDIA RTX 6000 Ada Generation",
    "#  Rank  1 Group  0 Pid   5150 on  workstation device  1 [0x21] NVIDIA RTX 6000 Ada Generation",
    "#",
    "#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw "
    " #wrong ",
    "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)             (us)  (GB/s)  (GB/s)"
    "         ",
    "        1024           256     float    none      -1     9.81    0.10    0.10    N/A     9.75    0.11    0.11"
    "    N/A",
    "     1048576        262144     float    none      -1    14.02   74.79   74.79    N/A    13.97   75.06   75.06"
    "    N/A",
    "   268435456      67108864     float    none      -1  1412.00  190.11  190.11    N/A  1410.50  190.31  190.31"
    "    N/A",
});

// -J results.json of a recent nccl-tests (util.cu writes it on one line, doubles
// with "%lf", root as the "%6i" string); two MPI processes on two hosts.
const std::string kJson2Nodes =
    R"({"version":2,"start_time":"2025-06-03 14:01:58","args":["/opt/nccl-tests/build/all_gather_perf","-b","1M",)"
    R"("-e","1G","-f","32","-g","8","-J","results.json"],"env":["PATH=\/usr\/bin"],"nccl_version":22703,)"
    R"("config":{"nthreads":1,"ngpus":8,"minimum_bytes":1048576,"maximum_bytes":1073741824,"step_factor":32,)"
    R"("warmup_iters":1,"iterations":20,"aggregated_iterations":1,"validation":1,"graph":0,)"
    R"("blocking_collectives":"false","per_iter_timing":"false","parallel_init":"false","devices":[)"
    R"({"rank":0,"group":0,"pid":4001,"hostname":"node-001","device":0,"device_hex":"0000:18:00",)"
    R"("device_info":"NVIDIA H100 80GB HBM3"},{"rank":8,"group":0,"pid":4002,"hostname":"node-002","device":0,)"
    R"("device_hex":"0000:18:00","device_info":"NVIDIA H100 80GB HBM3"}]},"results":[)"
    R"({"size":1048576,"count":16384,"type":"float","redop":"none","root":"    -1","out_of_place":{"time":31.420000,)"
    R"("alg_bw":33.372000,"bus_bw":31.286000,"nwrong":0.000000},"in_place":{"time":30.980000,"alg_bw":33.846000,)"
    R"("bus_bw":31.731000,"nwrong":0.000000},"actual_iterations":20,"experiment_name":""},)"
    R"({"size":33554432,"count":524288,"type":"float","redop":"none","root":"    -1","out_of_place":{"time":)"
    R"(402.710000,"alg_bw":83.321000,"bus_bw":78.113000,"nwrong":null},"in_place":{"time":399.500000,)"
    R"("alg_bw":83.990000,"bus_bw":78.741000,"nwrong":0.000000},"actual_iterations":20,"experiment_name":""},)"
    R"({"size":1073741824,"count":16777216,"type":"float","redop":"none","root":"    -1","out_of_place":{"time":)"
    R"(11236.000000,"alg_bw":95.562000,"bus_bw":89.590000,"nwrong":3.000000},"in_place":{"time":11201.000000,)"
    R"("alg_bw":95.861000,"bus_bw":89.870000,"nwrong":0.000000},"actual_iterations":20,"experiment_name":""}],)"
    R"("out_of_bounds":{"count":1,"okay":"false"},"average_bus_bandwidth":{"bandwidth":66.4,"okay":"unchecked"},)"
    R"("errors":[""],"end_time":"2025-06-03 14:02:31"})";

// ---------------------------------------------------------------------------
// Text tables

TEST(NcclTestsImport, AllReduceEightGpusTable) {
  const auto rows = parse_nccl_tests(join(kAllReduce8Gpu), "logs/all_reduce_perf.txt", std::nullopt);
  ASSERT_EQ(rows.size(), 6U);
  for (const auto& r : rows) {
    EXPECT_EQ(r.op, "all_reduce");
    EXPECT_EQ(r.scope, "intra_node");
    EXPECT_EQ(r.ranks, 8);
    EXPECT_EQ(r.wrong, 0);
  }
  // "           8             2     float     sum      -1    18.51    0.00    0.00      0 ..."
  EXPECT_DOUBLE_EQ(rows[0].bytes, 8.0);
  EXPECT_DOUBLE_EQ(rows[0].seconds, 18.51e-6);
  EXPECT_DOUBLE_EQ(rows[0].busbw_gbps, 0.0);
  // "     8388608       2097152     float     sum      -1    62.37  134.50  235.37      0    61.90 ..."
  EXPECT_DOUBLE_EQ(rows[4].bytes, 8388608.0);
  EXPECT_DOUBLE_EQ(rows[4].seconds, 62.37e-6);
  EXPECT_DOUBLE_EQ(rows[4].algbw_gbps, 134.50);
  EXPECT_DOUBLE_EQ(rows[4].busbw_gbps, 235.37);
  // "   268435456      67108864     float     sum      -1   1062.4  252.67  442.17      0 ..."
  EXPECT_DOUBLE_EQ(rows[5].bytes, 268435456.0);
  EXPECT_DOUBLE_EQ(rows[5].seconds, 1062.4e-6);
  EXPECT_DOUBLE_EQ(rows[5].algbw_gbps, 252.67);
  EXPECT_DOUBLE_EQ(rows[5].busbw_gbps, 442.17);
}

TEST(NcclTestsImport, CrlfLineEndingsAreRead) {
  std::string text;
  for (const auto& l : kAllReduce8Gpu) text += l + "\r\n";
  const auto rows = parse_nccl_tests(text, "all_reduce_perf.txt", std::nullopt);
  ASSERT_EQ(rows.size(), 6U);
  EXPECT_DOUBLE_EQ(rows[3].busbw_gbps, 16.50);
}

TEST(NcclTestsImport, OldFormatWithoutRedopOrRoot) {
  const auto rows = parse_nccl_tests(kOldAllGather, "all_gather_perf_a100.log", std::nullopt);
  ASSERT_EQ(rows.size(), 3U);
  for (const auto& r : rows) {
    EXPECT_EQ(r.op, "all_gather");
    EXPECT_EQ(r.scope, "intra_node");
    EXPECT_EQ(r.ranks, 4);  // the "#   Rank" lines
    EXPECT_EQ(r.wrong, 0);  // "0e+00": no deviation
  }
  // "    67108864       4194304   float   1201.5   55.85   41.89  0e+00 ..."
  EXPECT_DOUBLE_EQ(rows[2].bytes, 67108864.0);
  EXPECT_DOUBLE_EQ(rows[2].seconds, 1201.5e-6);
  EXPECT_DOUBLE_EQ(rows[2].algbw_gbps, 55.85);
  EXPECT_DOUBLE_EQ(rows[2].busbw_gbps, 41.89);
  // "        1024            64   float    12.48    0.08    0.06  0e+00 ..."
  EXPECT_DOUBLE_EQ(rows[0].seconds, 12.48e-6);
  EXPECT_DOUBLE_EQ(rows[0].busbw_gbps, 0.06);
}

TEST(NcclTestsImport, OldAlltoallWithBlankRedopAndZeroByteRow) {
  const auto rows = parse_nccl_tests(kOldAlltoall, "/data/alltoall_perf.out", std::nullopt);
  ASSERT_EQ(rows.size(), 2U);  // the 0-byte row measured nothing
  EXPECT_EQ(rows[0].op, "all_to_all");
  EXPECT_EQ(rows[0].ranks, 8);
  EXPECT_DOUBLE_EQ(rows[0].bytes, 4096.0);
  EXPECT_DOUBLE_EQ(rows[0].seconds, 25.61e-6);
  // "     1048576         32768   float            61.20   17.13   14.99  0e+00 ..."
  EXPECT_DOUBLE_EQ(rows[1].bytes, 1048576.0);
  EXPECT_DOUBLE_EQ(rows[1].seconds, 61.20e-6);
  EXPECT_DOUBLE_EQ(rows[1].algbw_gbps, 17.13);
  EXPECT_DOUBLE_EQ(rows[1].busbw_gbps, 14.99);
}

TEST(NcclTestsImport, OldBroadcastWithRootButNoRedop) {
  // Old broadcast.cu: header "size count type root", rows "%12li  %12li  %6s  %6i".
  const std::string text = join({
      "# nThread 1 nGpus 2 minBytes 1024 maxBytes 1048576 step: 1024(factor) warmup iters: 5 iters: 20 validation: 1 ",
      "#   Rank  0 Pid   9001 on      dgx-1 device  0 [0x06] Tesla V100-SXM2-16GB",
      "#   Rank  1 Pid   9001 on      dgx-1 device  1 [0x07] Tesla V100-SXM2-16GB",
      "#                                                     out-of-place                       in-place          ",
      "#       size         count    type    root     time   algbw   busbw  error     time   algbw   busbw  error",
      "#        (B)    (elements)                     (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)       ",
      "        1024           256   float       0     9.12    0.11    0.11  0e+00     9.05    0.11    0.11  0e+00",
      "     1048576        262144   float       0    28.44   36.87   36.87  0e+00    28.40   36.92   36.92  0e+00",
  });
  const auto rows = parse_nccl_tests(text, "broadcast_perf.txt", std::nullopt);
  ASSERT_EQ(rows.size(), 2U);
  EXPECT_EQ(rows[1].op, "broadcast");
  EXPECT_EQ(rows[1].ranks, 2);
  EXPECT_DOUBLE_EQ(rows[1].seconds, 28.44e-6);
  EXPECT_DOUBLE_EQ(rows[1].algbw_gbps, 36.87);
  EXPECT_DOUBLE_EQ(rows[1].busbw_gbps, 36.87);
}

TEST(NcclTestsImport, ModernAlltoallOverTwoNodesTakesTheOpFromTheOutput) {
  // The file name names no collective: "Collective test starting: alltoall_perf" does.
  const auto rows = parse_nccl_tests(kModernAlltoall2Nodes, "run-2025-06-03.txt", std::nullopt);
  ASSERT_EQ(rows.size(), 3U);
  for (const auto& r : rows) {
    EXPECT_EQ(r.op, "all_to_all");
    EXPECT_EQ(r.scope, "inter_node");  // node-001 and node-002
    EXPECT_EQ(r.ranks, 16);
    EXPECT_EQ(r.nodes, 2);  // 8 Rank lines on each
  }
  // "    16777216        262144     float    none      -1   412.60   40.66   38.12       0 ..."
  EXPECT_DOUBLE_EQ(rows[1].bytes, 16777216.0);
  EXPECT_DOUBLE_EQ(rows[1].seconds, 412.60e-6);
  EXPECT_DOUBLE_EQ(rows[1].algbw_gbps, 40.66);
  EXPECT_DOUBLE_EQ(rows[1].busbw_gbps, 38.12);
  EXPECT_EQ(rows[1].wrong, 0);
  // "  4294967296      67108864     float    none      -1  97133.0   44.22   41.45  1.2e+06 ..."
  EXPECT_DOUBLE_EQ(rows[2].bytes, 4294967296.0);
  EXPECT_DOUBLE_EQ(rows[2].seconds, 97133.0e-6);
  EXPECT_EQ(rows[2].wrong, 1200000);
}

TEST(NcclTestsImport, TwoNodeAllReduceWithTimestampColumn) {
  const auto rows = parse_nccl_tests(kAllReduce2NodesTimestamps, "nccl_allreduce_2nodes.txt", std::nullopt);
  ASSERT_EQ(rows.size(), 3U);
  for (const auto& r : rows) {
    EXPECT_EQ(r.op, "all_reduce");
    EXPECT_EQ(r.scope, "inter_node");
    EXPECT_EQ(r.ranks, 16);
    EXPECT_EQ(r.nodes, 2);  // a3-0001 and a3-0002, two processes of 8 GPUs
    EXPECT_EQ(r.wrong, 0);
  }
  // "   134217728      67108864  bfloat16     sum      -1   812.30  165.23  309.81       0 ..."
  EXPECT_DOUBLE_EQ(rows[1].bytes, 134217728.0);
  EXPECT_DOUBLE_EQ(rows[1].seconds, 812.30e-6);
  EXPECT_DOUBLE_EQ(rows[1].busbw_gbps, 309.81);
  EXPECT_DOUBLE_EQ(rows[2].seconds, 11873.0e-6);
}

TEST(NcclTestsImport, UncheckedWrongIsMinusOneAndOverrideWins) {
  // The override beats the file name (which would say all_reduce).
  const auto rows = parse_nccl_tests(kSendRecvNoCheck, "all_reduce_perf.txt", std::string("sendrecv_perf"));
  ASSERT_EQ(rows.size(), 3U);
  for (const auto& r : rows) {
    EXPECT_EQ(r.op, "send_recv");
    EXPECT_EQ(r.ranks, 2);
    EXPECT_EQ(r.wrong, -1);  // "N/A": -c 0
  }
  EXPECT_DOUBLE_EQ(rows[2].seconds, 1412.00e-6);
  EXPECT_DOUBLE_EQ(rows[2].busbw_gbps, 190.11);
}

TEST(NcclTestsImport, OldErrorColumnWithADeviationIsNotACount) {
  const auto rows = parse_nccl_tests(kOldAllGather, "all_gather_perf.txt", std::nullopt);
  ASSERT_EQ(rows.size(), 3U);
  // Only the in-place group of the last row has "2e-07"; out-of-place is "0e+00".
  EXPECT_EQ(rows[2].wrong, 0);
  std::string text = kOldAllGather;
  const std::string row = "55.85   41.89  0e+00";
  text.replace(text.find(row), row.size(), "55.85   41.89  3e-02");
  EXPECT_EQ(parse_nccl_tests(text, "all_gather_perf.txt", std::nullopt)[2].wrong, -1);
}

TEST(NcclTestsImport, ConcatenatedRunsKeepTheirOwnOpAndRanks) {
  const std::string text = kModernAlltoall2Nodes + kAllReduce2NodesTimestamps;
  const auto rows = parse_nccl_tests(text, "sweep.log", std::nullopt);
  ASSERT_EQ(rows.size(), 6U);
  EXPECT_EQ(rows[0].op, "all_to_all");
  EXPECT_EQ(rows[2].op, "all_to_all");
  EXPECT_EQ(rows[3].op, "all_reduce");
  EXPECT_EQ(rows[5].op, "all_reduce");
  EXPECT_DOUBLE_EQ(rows[3].seconds, 48.91e-6);
}

TEST(NcclTestsImport, RanksFromNThreadLineWithoutRankLines) {
  std::vector<std::string> lines;
  for (const auto& l : kAllReduce8Gpu) {
    if (l.rfind("#  Rank", 0) != 0) lines.push_back(l);
  }
  const auto rows = parse_nccl_tests(join(lines), "all_reduce_perf.txt", std::nullopt);
  EXPECT_EQ(rows[0].ranks, 8);  // nThread 1 x nGpus 8
  EXPECT_EQ(rows[0].scope, "intra_node");
  EXPECT_EQ(rows[0].nodes, 1);  // one process: one host
}

TEST(NcclTestsImport, SplitGroupsCountOneCommunicator) {
  // NCCL_TESTS_SPLIT_MASK=0x1 over 4 processes: groups {0, 2} and {1, 3}.
  const std::string text = join({
      "# nThread 1 nGpus 1 minBytes 1024 maxBytes 1048576 step: 1024(factor) warmup iters: 5 iters: 20 agg iters: 1 "
      "validation: 1 graph: 0",
      "# Using devices",
      "#  Rank  0 Group  0 Pid   1001 on     host-a device  0 [0x18] NVIDIA A100-SXM4-80GB",
      "#  Rank  1 Group  1 Pid   1002 on     host-a device  1 [0x2a] NVIDIA A100-SXM4-80GB",
      "#  Rank  2 Group  0 Pid   1003 on     host-a device  2 [0x3a] NVIDIA A100-SXM4-80GB",
      "#  Rank  3 Group  1 Pid   1004 on     host-a device  3 [0x5d] NVIDIA A100-SXM4-80GB",
      "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw "
      "#wrong",
      "        1024           256     float     sum      -1    10.00    0.10    0.10      0    10.00    0.10    0.10 "
      "     0",
      "     1048576        262144     float     sum      -1    20.00   52.43   52.43      0    20.00   52.43   52.43 "
      "     0",
  });
  const auto rows = parse_nccl_tests(text, "all_reduce_perf.txt", std::nullopt);
  ASSERT_EQ(rows.size(), 2U);
  EXPECT_EQ(rows[0].ranks, 2);
}

TEST(NcclTestsImport, PerIterationColumnsAreIgnored) {
  const std::string text = join({
      "# nThread 1 nGpus 4 minBytes 1048576 maxBytes 4194304 step: 4(factor) warmup iters: 1 iters: 20 agg iters: 1 "
      "validation: 1 graph: 0 unalign: 0",
      "# Per-Iteration Report: CUDA event timing; i_* uses max over process rows ",
      "#  Rank  0 Group  0 Pid   1001 on     host-a device  0 [0000:18:00] NVIDIA B200",
      "#  Rank  1 Group  0 Pid   1001 on     host-a device  1 [0000:2a:00] NVIDIA B200",
      "#       size         count      type   redop    root     time   algbw   busbw  #wrong    i_min    i_max    "
      "i_p99    i_cv%     time   algbw   busbw  #wrong    i_min    i_max    i_p99    i_cv% ",
      "     1048576        131072     float    none      -1    11.20   93.62   46.81       0    10.90    12.10    "
      "12.00     2.31    11.10   94.47   47.23       0    10.80    12.00    11.90     2.20",
      "     4194304        524288     float    none      -1    30.50  137.52   68.76       0    30.10    31.40    "
      "31.30     1.05    30.40  137.97   68.98       0    30.00    31.20    31.10     1.01",
  });
  const auto rows = parse_nccl_tests(text, "reduce_scatter_perf.txt", std::nullopt);
  ASSERT_EQ(rows.size(), 2U);
  EXPECT_EQ(rows[0].op, "reduce_scatter");
  EXPECT_DOUBLE_EQ(rows[1].seconds, 30.50e-6);
  EXPECT_DOUBLE_EQ(rows[1].busbw_gbps, 68.76);
}

TEST(NcclTestsImport, RowsWithoutHeaderAreReadByColumnCount) {
  // A bare excerpt of rows (modern layout with root; old layout without).
  const std::string modern = join({
      "# nThread 1 nGpus 8 minBytes 8 maxBytes 268435456 step: 32(factor) warmup iters: 5 iters: 20 agg iters: 1 "
      "validation: 1 graph: 0",
      "     8388608       2097152     float     sum      -1    62.37  134.50  235.37      0    61.90  135.52  237.16 "
      "     0",
      "   268435456      67108864     float     sum      -1   1062.4  252.67  442.17      0   1059.8  253.29  443.26 "
      "     0",
  });
  auto rows = parse_nccl_tests(modern, "all_reduce_perf.txt", std::nullopt);
  ASSERT_EQ(rows.size(), 2U);
  EXPECT_DOUBLE_EQ(rows[0].seconds, 62.37e-6);
  EXPECT_DOUBLE_EQ(rows[1].busbw_gbps, 442.17);

  const std::string old = join({
      "# nThread 1 nGpus 4 minBytes 1024 maxBytes 67108864 step: 1024(factor) warmup iters: 5 iters: 20 validation: "
      "1 ",
      "     1048576         65536   float    35.72   29.36   22.02  0e+00    35.10   29.87   22.41  0e+00",
  });
  rows = parse_nccl_tests(old, "all_gather_perf.txt", std::nullopt);
  ASSERT_EQ(rows.size(), 1U);
  EXPECT_DOUBLE_EQ(rows[0].seconds, 35.72e-6);
  EXPECT_DOUBLE_EQ(rows[0].busbw_gbps, 22.02);
  EXPECT_EQ(rows[0].ranks, 4);
}

// all_reduce_perf -b 8M -e 128M -f 4 -g 1 under mpirun -np 16 -npernode 4 (nccl-tests
// 2.17: one "#  Rank" line per rank, "on %10s" the process's host name, host
// names shorter than 10 characters right-aligned): 16 ranks on 4 hosts x 4.
std::string all_reduce_16_ranks(const std::vector<std::string>& host_of_rank) {
  std::vector<std::string> lines = {
      "# nccl-tests version 2.17.1 nccl-headers=22703 nccl-library=22703",
      "# Collective test starting: all_reduce_perf",
      "# nThread 1 nGpus 1 minBytes 8388608 maxBytes 134217728 step: 4(factor) warmup iters: 5 iters: 20 agg "
      "iters: 1 validation: 1 graph: 0 unalign: 0",
      "#",
      "# Using devices",
  };
  for (std::size_t r = 0; r < host_of_rank.size(); ++r) {
    const std::string rank = (r < 10 ? " " : "") + std::to_string(r);
    const std::string host = std::string(host_of_rank[r].size() < 10 ? 10 - host_of_rank[r].size() : 0, ' ') +
                             host_of_rank[r];
    lines.push_back("#  Rank " + rank + " Group  0 Pid  " + std::to_string(31000 + r) + " on " + host +
                    " device  " + std::to_string(r % 4) + " [0000:" + std::to_string(18 + r % 4) +
                    ":00] NVIDIA H100 80GB HBM3");
  }
  for (const char* l : {
           "#",
           "#                                                              out-of-place                       "
           "in-place          ",
           "#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw "
           "  busbw  #wrong ",
           "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)             (us)  (GB/s)"
           "  (GB/s)         ",
           "     8388608       2097152     float     sum      -1   301.50   27.82   52.16       0   300.20   27.94 "
           "  52.39       0",
           "    33554432       8388608     float     sum      -1   912.80   36.76   68.92       0   910.40   36.86 "
           "  69.10       0",
           "   134217728      33554432     float     sum      -1   3304.1   40.62   76.17       0   3299.8   40.67 "
           "  76.26       0",
           "# Out of bounds values : 0 OK",
           "# Avg bus bandwidth    : 65.75 ",
           "#",
           "# Collective test concluded: all_reduce_perf",
       }) {
    lines.emplace_back(l);
  }
  return join(lines);
}

TEST(NcclTestsImport, NodesAreTheDistinctHostsOfTheRankLines) {
  // Ranks 0-3 on gpu-a01, 4-7 on gpu-a02, ...: 4 hosts of 4 ranks each.
  std::vector<std::string> hosts;
  for (int r = 0; r < 16; ++r) hosts.push_back("gpu-a0" + std::to_string(r / 4 + 1));
  const auto rows = parse_nccl_tests(all_reduce_16_ranks(hosts), "mpi-run.log", std::nullopt);
  ASSERT_EQ(rows.size(), 3U);
  for (const auto& r : rows) {
    EXPECT_EQ(r.op, "all_reduce");
    EXPECT_EQ(r.scope, "inter_node");
    EXPECT_EQ(r.ranks, 16);
    EXPECT_EQ(r.nodes, 4);
  }
  // "    33554432       8388608     float     sum      -1   912.80   36.76   68.92       0 ..."
  EXPECT_DOUBLE_EQ(rows[1].bytes, 33554432.0);
  EXPECT_DOUBLE_EQ(rows[1].seconds, 912.80e-6);
  EXPECT_DOUBLE_EQ(rows[1].algbw_gbps, 36.76);
  EXPECT_EQ(to_json(rows[1]).at("nodes"), 4);

  // A host name of 10 characters or more fills the "%10s" field: the same count.
  std::vector<std::string> long_names;
  for (int r = 0; r < 16; ++r) long_names.push_back("compute-node-" + std::to_string(r % 2) + ".cluster.local");
  const auto two = parse_nccl_tests(all_reduce_16_ranks(long_names), "all_reduce_perf.txt", std::nullopt);
  EXPECT_EQ(two[0].nodes, 2);  // ranks alternate between two hosts: 8 on each
  EXPECT_EQ(two[0].scope, "inter_node");

  // All 16 on one host: intra_node, one node.
  const auto one = parse_nccl_tests(all_reduce_16_ranks(std::vector<std::string>(16, "dgx-b200")),
                                    "all_reduce_perf.txt", std::nullopt);
  EXPECT_EQ(one[0].scope, "intra_node");
  EXPECT_EQ(one[0].nodes, 1);
  EXPECT_EQ(to_json(one[0]).at("nodes"), 1);
}

TEST(NcclTestsImport, AnUnevenSpreadLeavesNodesOut) {
  // -np 12 over a host of 8 and one of 4: no "ranks per node"; the rows say
  // inter_node without "nodes" (kept, priced by nothing).
  std::vector<std::string> hosts;
  for (int r = 0; r < 12; ++r) hosts.push_back(r < 8 ? "node-001" : "node-002");
  const auto rows = parse_nccl_tests(all_reduce_16_ranks(hosts), "all_reduce_perf.txt", std::nullopt);
  EXPECT_EQ(rows[0].ranks, 12);
  EXPECT_EQ(rows[0].scope, "inter_node");
  EXPECT_EQ(rows[0].nodes, 0);
  EXPECT_FALSE(to_json(rows[0]).contains("nodes"));
}

// ---------------------------------------------------------------------------
// JSON (-J)

TEST(NcclTestsImport, JsonTwoProcessesOnTwoHosts) {
  // The op from the program in "args"; ranks = 2 processes x 1 thread x 8 GPUs.
  const auto rows = parse_nccl_tests(kJson2Nodes, "results.json", std::nullopt);
  ASSERT_EQ(rows.size(), 3U);
  for (const auto& r : rows) {
    EXPECT_EQ(r.op, "all_gather");
    EXPECT_EQ(r.scope, "inter_node");
    EXPECT_EQ(r.ranks, 16);
    EXPECT_EQ(r.nodes, 2);  // one "devices" entry (process of 8 GPUs) on each host
  }
  EXPECT_DOUBLE_EQ(rows[0].bytes, 1048576.0);
  EXPECT_DOUBLE_EQ(rows[0].seconds, 31.42e-6);
  EXPECT_DOUBLE_EQ(rows[0].algbw_gbps, 33.372);
  EXPECT_DOUBLE_EQ(rows[0].busbw_gbps, 31.286);
  EXPECT_EQ(rows[0].wrong, 0);
  EXPECT_EQ(rows[1].wrong, -1);  // "nwrong": null
  EXPECT_DOUBLE_EQ(rows[2].seconds, 11236.0e-6);
  EXPECT_EQ(rows[2].wrong, 3);
}

TEST(NcclTestsImport, JsonNodesCountProcessesPerHost) {
  // -g 2 (2 GPUs per process), 4 processes: two on host-x, two on host-y: 8 ranks,
  // 2 nodes x 4. With a third process on host-x instead, 6 + 2: no "nodes".
  auto file = [](const std::vector<std::string>& hosts) {
    std::string devices;
    for (std::size_t p = 0; p < hosts.size(); ++p) {
      devices += std::string(p == 0 ? "" : ",") + R"({"rank":)" + std::to_string(2 * p) +
                 R"(,"group":0,"pid":)" + std::to_string(500 + p) + R"(,"hostname":")" + hosts[p] +
                 R"(","device":0,"device_hex":"0000:18:00","device_info":"NVIDIA H200"})";
    }
    return R"({"version":2,"args":["./reduce_scatter_perf"],"config":{"nthreads":1,"ngpus":2,"devices":[)" + devices +
           R"(]},"results":[{"size":65536,"count":2048,"type":"float","redop":"sum","root":"    -1",)"
           R"("out_of_place":{"time":40.0,"alg_bw":1.64,"bus_bw":1.43,"nwrong":0.0},"in_place":null}]})";
  };
  const auto even = parse_nccl_tests(file({"host-x", "host-x", "host-y", "host-y"}), "out.json", std::nullopt);
  ASSERT_EQ(even.size(), 1U);
  EXPECT_EQ(even[0].op, "reduce_scatter");
  EXPECT_EQ(even[0].ranks, 8);
  EXPECT_EQ(even[0].nodes, 2);
  EXPECT_EQ(even[0].scope, "inter_node");
  const auto uneven = parse_nccl_tests(file({"host-x", "host-x", "host-x", "host-y"}), "out.json", std::nullopt);
  EXPECT_EQ(uneven[0].ranks, 8);
  EXPECT_EQ(uneven[0].nodes, 0);
  EXPECT_EQ(uneven[0].scope, "inter_node");
}

TEST(NcclTestsImport, JsonSingleProcessIsIntraNodeAndInPlaceOnlyRowsFallBack) {
  const std::string json =
      R"({"version":1,"args":["./all_reduce_perf"],"config":{"nthreads":1,"ngpus":8,"devices":[{"rank":0,)"
      R"("group":0,"pid":1,"hostname":"node-001","device":0,"device_hex":"0000:18:00","device_info":"NVIDIA H200"}]},)"
      R"("results":[{"size":0,"count":0,"type":"float","redop":"sum","root":"    -1","out_of_place":{"time":1.0,)"
      R"("alg_bw":0.0,"bus_bw":0.0,"nwrong":0.0},"in_place":null},)"
      R"({"size":4096,"count":1024,"type":"float","redop":"sum","root":"    -1","out_of_place":null,)"
      R"("in_place":{"time":20.5,"alg_bw":0.2,"bus_bw":0.35,"nwrong":0.0}}]})";
  const auto rows = parse_nccl_tests(json, "out.json", std::nullopt);
  ASSERT_EQ(rows.size(), 1U);
  EXPECT_EQ(rows[0].op, "all_reduce");
  EXPECT_EQ(rows[0].scope, "intra_node");
  EXPECT_EQ(rows[0].ranks, 8);
  EXPECT_EQ(rows[0].nodes, 1);
  EXPECT_DOUBLE_EQ(rows[0].seconds, 20.5e-6);
  EXPECT_DOUBLE_EQ(rows[0].busbw_gbps, 0.35);
}

TEST(NcclTestsImport, JsonErrors) {
  // No program in "args", no op in the file name.
  const std::string no_args =
      R"({"config":{"nthreads":1,"ngpus":2},"results":[{"size":1024,"out_of_place":{"time":9.0,"alg_bw":0.1,)"
      R"("bus_bw":0.1,"nwrong":0.0}}]})";
  EXPECT_NE(error_of([&] { parse_nccl_tests(no_args, "results.json", std::nullopt); }).find("--op"),
            std::string::npos);
  EXPECT_EQ(parse_nccl_tests(no_args, "results.json", std::string("broadcast"))[0].ranks, 2);

  // -C 1 reports CPU (launch) time.
  const std::string cpu =
      R"({"args":["all_reduce_perf"],"config":{"nthreads":1,"ngpus":2},"results":[{"size":1024,)"
      R"("out_of_place":{"cpu_time":3.0,"alg_bw":0.3,"bus_bw":0.3,"nwrong":0.0}}]})";
  EXPECT_NE(error_of([&] { parse_nccl_tests(cpu, "r.json", std::nullopt); }).find("-C"), std::string::npos);

  // A missing field names the result.
  const std::string missing =
      R"({"args":["all_reduce_perf"],"config":{"nthreads":1,"ngpus":2},"results":[{"size":1024,)"
      R"("out_of_place":{"time":3.0,"bus_bw":0.3,"nwrong":0.0}}]})";
  const std::string msg = error_of([&] { parse_nccl_tests(missing, "r.json", std::nullopt); });
  EXPECT_NE(msg.find("r.json: results[0]"), std::string::npos) << msg;
  EXPECT_NE(msg.find("alg_bw"), std::string::npos) << msg;

  // An interrupted run leaves the JSON unclosed.
  const std::string cut = kJson2Nodes.substr(0, kJson2Nodes.size() / 2);
  EXPECT_NE(error_of([&] { parse_nccl_tests(cut, "cut.json", std::nullopt); }).find("cut.json: not valid JSON"),
            std::string::npos);

  // No rows.
  const std::string empty = R"({"args":["all_reduce_perf"],"config":{"nthreads":1,"ngpus":2},"results":[]})";
  EXPECT_NE(error_of([&] { parse_nccl_tests(empty, "e.json", std::nullopt); }).find("no nccl-tests results"),
            std::string::npos);
}

// ---------------------------------------------------------------------------
// Errors

TEST(NcclTestsImport, MalformedRowNamesFileLineAndColumns) {
  auto lines = kAllReduce8Gpu;
  const std::size_t bad = kAllReduce8GpuFirstRowLine + 2;  // the 8192-byte row
  lines[bad - 1] = "        8192          2048     float     sum      -1    xyz    0.41    0.72      0    19.71    0.42"
                   "    0.73      0";
  const std::string msg =
      error_of([&] { parse_nccl_tests(join(lines), "all_reduce_perf.txt", std::nullopt); });
  EXPECT_NE(msg.find("all_reduce_perf.txt:" + std::to_string(bad) + ": "), std::string::npos) << msg;
  EXPECT_NE(msg.find("column 'time'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("(size count type redop root time algbw busbw #wrong)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("got 'xyz'"), std::string::npos) << msg;

  // A row cut short (a crashed run).
  lines = kAllReduce8Gpu;
  lines[bad - 1] = "        8192          2048     float     sum      -1";
  const std::string cut = error_of([&] { parse_nccl_tests(join(lines), "all_reduce_perf.txt", std::nullopt); });
  EXPECT_NE(cut.find("all_reduce_perf.txt:" + std::to_string(bad) +
                     ": expected 9 or more columns (size count type redop root time algbw busbw #wrong), got 5"),
            std::string::npos)
      << cut;
}

TEST(NcclTestsImport, NegativeOrNonNumericValuesAreErrors) {
  auto lines = kAllReduce8Gpu;
  lines[kAllReduce8GpuFirstRowLine - 1] =
      "           8             2     float     sum      -1    18.51    0.00    nan      0    18.05    0.00    0.00"
      "      0";
  const std::string msg = error_of([&] { parse_nccl_tests(join(lines), "ar.txt", std::string("all_reduce")); });
  EXPECT_NE(msg.find("ar.txt:" + std::to_string(kAllReduce8GpuFirstRowLine) + ": "), std::string::npos) << msg;
  EXPECT_NE(msg.find("column 'busbw'"), std::string::npos) << msg;
}

TEST(NcclTestsImport, UnknownOpAsksForOp) {
  const std::string msg = error_of([&] { parse_nccl_tests(join(kAllReduce8Gpu), "nccl.log", std::nullopt); });
  EXPECT_NE(msg.find("nccl.log:" + std::to_string(kAllReduce8GpuFirstRowLine) + ": "), std::string::npos) << msg;
  EXPECT_NE(msg.find("pass --op"), std::string::npos) << msg;
  // alltoallv is not all_to_all; "reduced" is not reduce.
  EXPECT_NE(error_of([&] { parse_nccl_tests(join(kAllReduce8Gpu), "alltoallv_perf.txt", std::nullopt); })
                .find("--op"),
            std::string::npos);
  EXPECT_NE(error_of([&] { parse_nccl_tests(join(kAllReduce8Gpu), "reduced.txt", std::nullopt); }).find("--op"),
            std::string::npos);
  // An --op we do not know.
  EXPECT_NE(error_of([&] { parse_nccl_tests(join(kAllReduce8Gpu), "x.txt", std::string("gather")); })
                .find("unknown collective 'gather'"),
            std::string::npos);
}

TEST(NcclTestsImport, EmptyTablesAreErrors) {
  EXPECT_NE(error_of([] { parse_nccl_tests("", "all_reduce_perf.txt", std::nullopt); }).find("all_reduce_perf.txt"),
            std::string::npos);
  // Headers but no rows (the run failed before the first size).
  std::vector<std::string> lines(kAllReduce8Gpu.begin(),
                                 kAllReduce8Gpu.begin() + static_cast<std::ptrdiff_t>(kAllReduce8GpuFirstRowLine - 1));
  lines.emplace_back("node-001:12345:12345 [0] NCCL WARN Cuda failure 'out of memory'");
  const std::string msg = error_of([&] { parse_nccl_tests(join(lines), "all_reduce_perf.txt", std::nullopt); });
  EXPECT_NE(msg.find("all_reduce_perf.txt: no nccl-tests result rows"), std::string::npos) << msg;
  // Only 0-byte rows.
  const std::string zero = join({
      "#  Rank  0 Group  0 Pid   1001 on     host-a device  0 [0x18] NVIDIA A100-SXM4-80GB",
      "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw "
      "#wrong",
      "           0             0     float    none      -1     0.35    0.00    0.00      0     0.33    0.00    0.00 "
      "     0",
  });
  EXPECT_NE(error_of([&] { parse_nccl_tests(zero, "alltoall_perf.txt", std::nullopt); }).find("0 bytes"),
            std::string::npos);
}

TEST(NcclTestsImport, CpuTimeTablesAreRefused) {
  auto lines = kAllReduce8Gpu;
  const std::size_t header = kAllReduce8GpuFirstRowLine - 2;
  lines[header - 1] = "#       size         count      type   redop    root  cputime   algbw   busbw #wrong  cputime   "
                      "algbw   busbw #wrong";
  const std::string msg = error_of([&] { parse_nccl_tests(join(lines), "all_reduce_perf.txt", std::nullopt); });
  EXPECT_NE(msg.find("all_reduce_perf.txt:" + std::to_string(header) + ": "), std::string::npos) << msg;
  EXPECT_NE(msg.find("-C"), std::string::npos) << msg;
}

TEST(NcclTestsImport, NoRanksIsAnError) {
  const std::string text = join({
      "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw "
      "#wrong",
      "        1024           256     float     sum      -1    10.00    0.10    0.10      0    10.00    0.10    0.10 "
      "     0",
  });
  const std::string msg = error_of([&] { parse_nccl_tests(text, "all_reduce_perf.txt", std::nullopt); });
  EXPECT_NE(msg.find("all_reduce_perf.txt:2: cannot tell the number of ranks"), std::string::npos) << msg;
}

// ---------------------------------------------------------------------------
// Names, bus factor

TEST(NcclTestsImport, OpNames) {
  EXPECT_EQ(normalize_collective_op("all_reduce_perf"), "all_reduce");
  EXPECT_EQ(normalize_collective_op("AllReduce"), "all_reduce");
  EXPECT_EQ(normalize_collective_op("all_gather"), "all_gather");
  EXPECT_EQ(normalize_collective_op("reduce_scatter_perf"), "reduce_scatter");
  EXPECT_EQ(normalize_collective_op("alltoall_perf"), "all_to_all");
  EXPECT_EQ(normalize_collective_op("all-to-all"), "all_to_all");
  EXPECT_EQ(normalize_collective_op("broadcast_perf"), "broadcast");
  EXPECT_EQ(normalize_collective_op("sendrecv_perf"), "send_recv");
  EXPECT_EQ(normalize_collective_op("reduce_perf"), "reduce");
  EXPECT_EQ(normalize_collective_op("gather_perf"), std::nullopt);
  EXPECT_EQ(normalize_collective_op("alltoallv"), std::nullopt);
}

TEST(NcclTestsImport, BusFactors) {
  EXPECT_DOUBLE_EQ(bus_factor("all_reduce", 8), 1.75);  // 2 x 7/8
  EXPECT_DOUBLE_EQ(bus_factor("all_reduce", 2), 1.0);
  EXPECT_DOUBLE_EQ(bus_factor("all_reduce", 1), 0.0);
  EXPECT_DOUBLE_EQ(bus_factor("all_gather", 8), 0.875);
  EXPECT_DOUBLE_EQ(bus_factor("reduce_scatter", 4), 0.75);
  EXPECT_DOUBLE_EQ(bus_factor("all_to_all", 16), 0.9375);
  EXPECT_DOUBLE_EQ(bus_factor("broadcast", 8), 1.0);
  EXPECT_DOUBLE_EQ(bus_factor("reduce", 8), 1.0);
  EXPECT_DOUBLE_EQ(bus_factor("send_recv", 2), 1.0);
  EXPECT_THROW(bus_factor("gather", 8), std::runtime_error);
  EXPECT_THROW(bus_factor("all_reduce", 0), std::runtime_error);
}

// ---------------------------------------------------------------------------
// Alpha-beta fit

CollectiveRow synthetic(const std::string& op, int ranks, double bytes, double seconds) {
  CollectiveRow r;
  r.op = op;
  r.scope = "intra_node";
  r.ranks = ranks;
  r.bytes = bytes;
  r.seconds = seconds;
  r.algbw_gbps = bytes / seconds / 1e9;
  r.busbw_gbps = r.algbw_gbps * bus_factor(op, ranks);
  return r;
}

TEST(NcclTestsImport, FitRecoversAlphaAndBusBandwidth) {
  // t = 20 us + bytes x f / (400 GB/s). all_reduce over 8 ranks: f = 1.75, so
  // 1 MiB takes 20e-6 + 1048576 x 1.75 / 4e11 = 24.58752e-6 s and 1 GiB
  // 20e-6 + 1073741824 x 1.75 / 4e11 = 4.71762048e-3 s. all_gather over 4 ranks:
  // f = 0.75, 1 MiB: 20e-6 + 1048576 x 0.75 / 4e11 = 21.96608e-6 s.
  std::vector<CollectiveRow> rows;
  for (double bytes = 4.0; bytes <= 4294967296.0; bytes *= 4.0) {  // 4 B .. 4 GiB
    rows.push_back(synthetic("all_reduce", 8, bytes, 20e-6 + bytes * 1.75 / 400e9));
    rows.push_back(synthetic("all_gather", 4, bytes, 20e-6 + bytes * 0.75 / 400e9));
  }
  ASSERT_DOUBLE_EQ(rows[18].bytes, 1048576.0);
  EXPECT_NEAR(rows[18].seconds, 24.58752e-6, 1e-18);
  EXPECT_NEAR(rows[19].seconds, 21.96608e-6, 1e-18);
  ASSERT_DOUBLE_EQ(rows[28].bytes, 1073741824.0);
  EXPECT_NEAR(rows[28].seconds, 4.71762048e-3, 1e-15);

  const auto fits = fit_alpha_beta(rows);
  ASSERT_EQ(fits.size(), 2U);
  EXPECT_EQ(fits[0].op, "all_reduce");
  EXPECT_EQ(fits[0].scope, "intra_node");
  EXPECT_EQ(fits[0].ranks, 8);
  EXPECT_NEAR(fits[0].alpha_s, 20e-6, 20e-6 * 1e-9);
  EXPECT_NEAR(fits[0].busbw_gbps, 400.0, 400.0 * 1e-9);
  EXPECT_EQ(fits[1].op, "all_gather");
  EXPECT_EQ(fits[1].ranks, 4);
  EXPECT_NEAR(fits[1].alpha_s, 20e-6, 20e-6 * 1e-9);
  EXPECT_NEAR(fits[1].busbw_gbps, 400.0, 400.0 * 1e-9);
}

TEST(NcclTestsImport, FitSeparatesScopesAndSkipsWrongAndEmptyRows) {
  std::vector<CollectiveRow> rows;
  for (double bytes = 1024.0; bytes <= 1073741824.0; bytes *= 8.0) {
    rows.push_back(synthetic("broadcast", 8, bytes, 5e-6 + bytes / 300e9));
    auto inter = synthetic("broadcast", 8, bytes, 30e-6 + bytes / 40e9);
    inter.scope = "inter_node";
    rows.push_back(inter);
  }
  auto broken = synthetic("broadcast", 8, 65536.0, 1.0);  // wrong elements: not a measurement
  broken.wrong = 12;
  rows.push_back(broken);
  rows.push_back(synthetic("broadcast", 8, 0.0, 1e-6));  // 0 bytes: left out
  const auto fits = fit_alpha_beta(rows);
  ASSERT_EQ(fits.size(), 2U);
  EXPECT_EQ(fits[0].scope, "intra_node");
  EXPECT_NEAR(fits[0].alpha_s, 5e-6, 5e-6 * 1e-9);
  EXPECT_NEAR(fits[0].busbw_gbps, 300.0, 300.0 * 1e-9);
  EXPECT_EQ(fits[1].scope, "inter_node");
  EXPECT_NEAR(fits[1].alpha_s, 30e-6, 30e-6 * 1e-9);
  EXPECT_NEAR(fits[1].busbw_gbps, 40.0, 40.0 * 1e-9);
}

TEST(NcclTestsImport, FitSeparatesSpreadsOfOneRankCount) {
  // 16 ranks on 2 nodes x 8 at t = 20 us + b x 1.875 / (50 GB/s), on 4 x 4 at
  // 30 us + b x 1.875 / (25 GB/s) (all_reduce: f = 2 x 15 / 16 = 1.875).
  std::vector<CollectiveRow> rows;
  for (double bytes = 1024.0; bytes <= 1073741824.0; bytes *= 8.0) {
    auto two = synthetic("all_reduce", 16, bytes, 20e-6 + bytes * 1.875 / 50e9);
    two.scope = "inter_node";
    two.nodes = 2;
    auto four = synthetic("all_reduce", 16, bytes, 30e-6 + bytes * 1.875 / 25e9);
    four.scope = "inter_node";
    four.nodes = 4;
    rows.push_back(two);
    rows.push_back(four);
  }
  const auto fits = fit_alpha_beta(rows);
  ASSERT_EQ(fits.size(), 2U);
  EXPECT_EQ(fits[0].nodes, 2);
  EXPECT_NEAR(fits[0].alpha_s, 20e-6, 20e-6 * 1e-9);
  EXPECT_NEAR(fits[0].busbw_gbps, 50.0, 50.0 * 1e-9);
  EXPECT_EQ(fits[1].nodes, 4);
  EXPECT_NEAR(fits[1].alpha_s, 30e-6, 30e-6 * 1e-9);
  EXPECT_NEAR(fits[1].busbw_gbps, 25.0, 25.0 * 1e-9);
  EXPECT_EQ(to_json(fits[1]).at("nodes"), 4);
}

TEST(NcclTestsImport, FitClampsAlphaAtZero) {
  // t = -5 us + bytes / (100 GB/s) at 1 MB (5 us) and 10 MB (95 us): the free line
  // has alpha = -5 us, so alpha = 0 and beta minimizes sum (beta v_i - 1)^2 with
  // v_i = bytes_i / t_i: beta = (v1 + v2) / (v1^2 + v2^2).
  std::vector<CollectiveRow> rows = {synthetic("send_recv", 2, 1e6, 5e-6), synthetic("send_recv", 2, 1e7, 95e-6)};
  const auto fits = fit_alpha_beta(rows);
  ASSERT_EQ(fits.size(), 1U);
  EXPECT_EQ(fits[0].alpha_s, 0.0);
  const double v1 = 1e6 / 5e-6;
  const double v2 = 1e7 / 95e-6;
  const double beta = (v1 + v2) / (v1 * v1 + v2 * v2);
  EXPECT_NEAR(fits[0].busbw_gbps, 1.0 / beta / 1e9, 1e-9);
}

TEST(NcclTestsImport, FitOfRealTableIsPlausible) {
  const auto rows = parse_nccl_tests(join(kAllReduce8Gpu), "all_reduce_perf.txt", std::nullopt);
  const auto fits = fit_alpha_beta(rows);
  ASSERT_EQ(fits.size(), 1U);
  // The small sizes take 18.5-20 us; the largest measured 442 GB/s bus bandwidth
  // (its latency included), the 8 MiB one 235 GB/s.
  EXPECT_GT(fits[0].alpha_s, 15e-6);
  EXPECT_LT(fits[0].alpha_s, 25e-6);
  EXPECT_GT(fits[0].busbw_gbps, 380.0);
  EXPECT_LT(fits[0].busbw_gbps, 500.0);
}

TEST(NcclTestsImport, FitErrors) {
  // One size: latency and bandwidth cannot be told apart.
  std::vector<CollectiveRow> one = {synthetic("all_reduce", 8, 33554432.0, 1e-4),
                                    synthetic("all_reduce", 8, 33554432.0, 1.1e-4)};
  const std::string msg = error_of([&] { fit_alpha_beta(one); });
  EXPECT_NE(msg.find("all_reduce intra_node 8 ranks"), std::string::npos) << msg;
  EXPECT_NE(msg.find("two message sizes"), std::string::npos) << msg;
  // Time falling with size.
  std::vector<CollectiveRow> falling = {synthetic("all_reduce", 8, 1e3, 50e-6), synthetic("all_reduce", 8, 1e6, 20e-6)};
  EXPECT_NE(error_of([&] { fit_alpha_beta(falling); }).find("does not grow"), std::string::npos);
  // One rank: nothing moves.
  std::vector<CollectiveRow> single = {synthetic("all_reduce", 1, 1e3, 5e-6), synthetic("all_reduce", 1, 1e6, 6e-6)};
  EXPECT_THROW(fit_alpha_beta(single), std::runtime_error);
  EXPECT_TRUE(fit_alpha_beta({}).empty());
}

// ---------------------------------------------------------------------------
// JSON rows of the profile

TEST(NcclTestsImport, ProfileJsonFields) {
  CollectiveRow row{"all_reduce", "intra_node", 8, 1, 1048576.0, 3.1e-5, 33.8, 59.2, 0};
  const auto j = to_json(row);
  EXPECT_EQ(j.at("op"), "all_reduce");
  EXPECT_EQ(j.at("scope"), "intra_node");
  EXPECT_EQ(j.at("ranks"), 8);
  EXPECT_EQ(j.at("nodes"), 1);
  EXPECT_TRUE(j.at("bytes").is_number_integer());
  EXPECT_EQ(j.at("bytes"), 1048576);
  EXPECT_DOUBLE_EQ(j.at("seconds").get<double>(), 3.1e-5);
  EXPECT_DOUBLE_EQ(j.at("algbw_gbps").get<double>(), 33.8);
  EXPECT_DOUBLE_EQ(j.at("busbw_gbps").get<double>(), 59.2);
  EXPECT_EQ(j.at("wrong"), 0);
  EXPECT_EQ(j.size(), 9U);
  row.nodes = 0;  // not known: left out
  EXPECT_FALSE(to_json(row).contains("nodes"));

  CollectiveFit fit{"all_reduce", "intra_node", 8, 1, 1.9e-5, 470.1};
  const auto f = to_json(fit);
  EXPECT_EQ(f.at("op"), "all_reduce");
  EXPECT_EQ(f.at("scope"), "intra_node");
  EXPECT_EQ(f.at("ranks"), 8);
  EXPECT_DOUBLE_EQ(f.at("alpha_s").get<double>(), 1.9e-5);
  EXPECT_DOUBLE_EQ(f.at("busbw_gbps").get<double>(), 470.1);
  EXPECT_EQ(f.at("nodes"), 1);
  EXPECT_EQ(f.size(), 6U);
}

// Found by fuzz/fuzz_nccl_tests: a number beyond a double's range in -J JSON was
// nlohmann's out_of_range, not the importer's error naming the file.
TEST(NcclTestsImport, FuzzRegressionsAreErrorsNamingTheSource) {
  const std::filesystem::path dir =
      std::filesystem::path(TRAINSIM_SOURCE_DIR) / "fuzz" / "regressions" / "fuzz_nccl_tests";
  int inputs = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    std::ifstream in(e.path(), std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    const std::string message = error_of([&] { (void)parse_nccl_tests(text.str(), "regression.json", std::nullopt); });
    EXPECT_NE(message.find("regression.json"), std::string::npos) << e.path() << ": " << message;
    ++inputs;
  }
  EXPECT_GE(inputs, 1);
}

}  // namespace
}  // namespace trainsim::calibrate
