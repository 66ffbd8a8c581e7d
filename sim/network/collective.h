#pragma once
// A collective operation as the workload asks for it: what, how many bytes, and
// over which group of GPUs (its shape on the cluster).
#include <string_view>

namespace trainsim::net {

enum class CollectiveKind { kAllReduce, kAllGather, kReduceScatter, kAllToAll, kBroadcast, kReduce, kSendRecv };

std::string_view to_string(CollectiveKind k);

// The group's shape: `size` ranks spread over `nodes` nodes with `ranks_per_node`
// ranks on each (size == nodes * ranks_per_node).
struct CommGroup {
  int size = 1;
  int nodes = 1;
  int ranks_per_node = 1;
};

struct Collective {
  CollectiveKind kind = CollectiveKind::kAllReduce;
  double bytes = 0.0;  // the buffer size S as nccl-tests counts it (total for all_gather / reduce_scatter)
  CommGroup group;
};

}  // namespace trainsim::net
