#pragma once
// Where a parallel group's ranks sit on the cluster. Ranks are numbered with
// tensor-parallel innermost, then context, data and pipeline parallel (Megatron-LM's
// default order "tp-cp-ep-dp-pp"), so a group with stride `stride` has
// gpus_per_node / stride members per node when the stride fits inside a node.
#include "network/collective.h"

namespace trainsim::workload {

// Throws std::invalid_argument when the group does not tile the nodes evenly.
net::CommGroup group_shape(int size, long long stride, int gpus_per_node);

}  // namespace trainsim::workload
