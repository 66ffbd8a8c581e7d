#pragma once
// A collective operation as the workload asks for it: what, how many bytes, and
// over which group of GPUs (its shape on the cluster).
#include <memory>
#include <vector>

#include "network/collective_kind.h"

namespace trainsim::net {

// The group's shape: `size` ranks spread over `nodes` nodes with `ranks_per_node`
// ranks on each (size == nodes * ranks_per_node).
// `members`, when set, names the global ranks: members->front() is the group in
// group order, and any further lists are groups that run the same collective at
// the same moment (the symmetric copies a representative simulation leaves out
// of the task graph but keeps in the network). Unset: ranks_per_node ranks from
// the start of each of the first `nodes` nodes.
struct CommGroup {
  int size = 1;
  int nodes = 1;
  int ranks_per_node = 1;
  std::shared_ptr<const std::vector<std::vector<long long>>> members;
};

struct Collective {
  CollectiveKind kind = CollectiveKind::kAllReduce;
  double bytes = 0.0;  // the buffer size S as nccl-tests counts it (total for all_gather / reduce_scatter)
  CommGroup group;
  // Moved by the GPUs' copy engines, not by kernels on their SMs (Transformer Engine's
  // userbuffers ring exchange): compute beside it runs at its own speed (docs/model.md,
  // "Compute beside communication").
  bool copy_engine = false;
};

}  // namespace trainsim::net
