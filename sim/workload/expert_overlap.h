#pragma once
// Megatron-Core's overlap_moe_expert_parallel_comm (docs/model.md, "All-to-alls
// beside another micro-batch"): a layer's pass split at its two expert-parallel
// all-to-alls, so that one micro-batch's forward and another's backward can be
// interleaved with each one's all-to-alls beside the other's compute.
#include <array>
#include <vector>

#include "workload/transformer_ops.h"

namespace trainsim::workload {

// The parts of a layer's pass around its expert all-to-alls, in pass order:
// forward, [0] attention to the permutation, [1] the dispatch, [2] the experts,
// [3] the combine, [4] the unpermutation and residual; backward, [0] to the
// combine's, [1] the combine's all-to-all, [2] the experts, [3] the dispatch's,
// [4] the permutation to the layer's input. The all-to-alls run overlapped and the
// first op of [2] and of [4] waits for the one before it (Op::expert_waits). A
// layer without them (dense, or expert-parallel size 1) is all in [0].
inline constexpr std::size_t kExpertOverlapParts = 5;
using ExpertOverlapParts = std::array<std::vector<Op>, kExpertOverlapParts>;
ExpertOverlapParts split_at_expert_all_to_alls(const std::vector<Op>& pass);

}  // namespace trainsim::workload
