#pragma once
// Where a parallel group's ranks sit on the cluster. Ranks are numbered with
// tensor-parallel innermost, then context, data and pipeline parallel (Megatron-LM's
// default order "tp-cp-ep-dp-pp"), so a group with stride `stride` has
// gpus_per_node / stride members per node when the stride fits inside a node.
#include <vector>

#include "network/collective.h"

namespace trainsim::workload {

// Throws std::invalid_argument when the group does not tile the nodes evenly.
net::CommGroup group_shape(int size, long long stride, int gpus_per_node);

// Whether a group of `size` ranks `stride` apart puts as many on every node it
// touches, wherever it starts (group_shape does not throw).
[[nodiscard]] bool tiles_nodes(int size, long long stride, int gpus_per_node);

// Whether every tensor-parallel group (tp adjacent ranks) and, with cp > 1, every
// context-parallel block (tp x cp adjacent ranks) lies inside a node of the
// network (a scale-up domain) or spans whole ones: a block of `span` ranks fits
// `gpus_per_node` when one divides the other. Otherwise some groups straddle two
// domains and the groups' shapes differ from copy to copy.
[[nodiscard]] bool model_blocks_align(int tp, int cp, int gpus_per_node);

// The shape of an irregular group from its ranks: the nodes it touches and the
// most ranks it has on one of them (expert data-parallel groups under context
// parallelism interleave two strides).
net::CommGroup members_shape(const std::vector<long long>& ranks, int gpus_per_node);

// The global rank where each async_ps parameter server sits (docs/model.md,
// "Asynchronous training"): co-located, server j beside GPU floor(j n / S) of the
// n GPUs; dedicated, GPU 0 of node N + j after the N worker nodes.
std::vector<long long> parameter_server_ranks(int num_servers, bool dedicated, long long num_gpus, int gpus_per_node);

}  // namespace trainsim::workload
