#pragma once
// `trainsim collective`: one collective swept over sizes on a simulated cluster,
// reported as nccl-tests reports a real one (NVIDIA/nccl-tests, src/common.cu and
// the per-operation files): the same sizes, counts and bandwidth definitions, so
// a table from the simulator and one from the machine compare line by line.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/time.h"
#include "hardware/cluster.h"
#include "network/algorithms.h"
#include "network/collective.h"

namespace trainsim::report {

// Every buffer holds float, nccl-tests' default type (-d float).
inline constexpr std::uint64_t kElementBytes = 4;

enum class CollectiveNetworkModel { kAnalytic, kFlow };

struct CollectiveTableOptions {
  net::CollectiveKind kind = net::CollectiveKind::kAllReduce;
  std::uint64_t min_bytes = 8;             // -b
  std::uint64_t max_bytes = 8ULL << 30;    // -e
  std::uint64_t factor = 2;                // -f: each size is the last times this
  int gpus = 0;                            // -g: the group's size; 0 = every GPU of the cluster
  net::Algorithm algorithm = net::Algorithm::kAuto;
  CollectiveNetworkModel model = CollectiveNetworkModel::kFlow;
};

struct CollectiveRow {
  std::uint64_t bytes = 0;   // size column: the buffer S as nccl-tests counts it (algorithms.h)
  std::uint64_t count = 0;   // count column: elements passed to NCCL (per rank for all_gather,
                             // reduce_scatter; per peer for all_to_all)
  core::Time time = 0;       // ns
  double algbw = 0.0;        // GB/s (1e9 B/s): bytes / time
  double busbw = 0.0;        // GB/s: algbw x bus_factor
  net::Algorithm algorithm = net::Algorithm::kRing;  // the one chosen (auto) or forced
};

struct CollectiveTable {
  net::CommGroup group;
  std::string topology;  // Topology::description
  std::string network_model;  // the backend's name
  std::vector<CollectiveRow> rows;
  double average_busbw = 0.0;  // GB/s, over the rows, as nccl-tests' "Avg bus bandwidth"
};

// The first `gpus` ranks, node by node: one node's first `gpus` GPUs, or whole
// nodes. Throws std::invalid_argument for a group of fewer than 2 GPUs, more
// than the cluster has, or more than a node but not whole nodes.
net::CommGroup collective_group(const hw::ClusterSpec& cluster, int gpus);
// The sizes min, min*f, ... up to max, each rounded down as nccl-tests does (to
// whole elements; to whole elements per rank where the buffer is split among
// ranks); sizes that round to 0 are left out.
std::vector<std::uint64_t> collective_sizes(net::CollectiveKind kind, int ranks, std::uint64_t min_bytes,
                                            std::uint64_t max_bytes, std::uint64_t factor);

// Simulates the collective alone on the cluster at every size. Throws
// std::invalid_argument for bad options or a forced algorithm that cannot run
// the collective (the message says why).
CollectiveTable collective_table(const hw::ClusterSpec& cluster, const CollectiveTableOptions& options);
std::string format_collective_table(const hw::ClusterSpec& cluster, const CollectiveTableOptions& options,
                                    const CollectiveTable& table);

}  // namespace trainsim::report
