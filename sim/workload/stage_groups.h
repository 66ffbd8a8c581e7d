#pragma once
// The communication groups of each pipeline stage's simulated rank, with their
// real ranks in the layout's rank order (IterationLayout::rank): a stage rank has
// in-stage index i + tp (c + cp (x + ep d)) for TP index i, context index c and
// data-parallel index x + ep d (x: its place in the expert-parallel group).
// A group lists its symmetric copies too where they share links with it.
#include <vector>

#include "network/collective.h"
#include "workload/iteration_layout.h"
#include "workload/transformer_ops.h"

namespace trainsim::workload {

using Members = std::vector<std::vector<long long>>;

// A group of explicit ranks: `groups.front()` is the group, the rest its
// symmetric copies that run the same collective at the same time.
net::CommGroup explicit_group(const net::CommGroup& shape, Members groups);

// Two ranks exchanging a send_recv, on one node or across two.
net::CommGroup pair_shape(bool across_nodes);

// The groups a stage rank's communication markers run over, by CommScope.
struct ScopeGroups {
  net::CommGroup tensor;
  net::CommGroup context;  // ring steps: send_recv to the next context-parallel rank (a2a: the whole group)
  net::CommGroup expert;
  [[nodiscard]] const net::CommGroup& of(CommScope scope) const {
    switch (scope) {
      case CommScope::kContext: return context;
      case CommScope::kExpert: return expert;
      case CommScope::kTensor: break;
    }
    return tensor;
  }
};

struct StageGroups {
  ScopeGroups scope;
  net::CommGroup data;         // dense weights: the dp x cp ranks replicating them
  net::CommGroup expert_data;  // expert weights: the ranks holding the same experts
  // Pipeline transfers to the next stage's simulated rank and to the previous
  // one's (around the ring: the interleaved schedule's last stage sends to the
  // first), made once so every micro-batch's send names the same group.
  net::CommGroup to_next;
  net::CommGroup to_previous;
};

// Stage s's groups at index s. A group that does not tile the nodes (39 data-parallel
// ranks on nodes of 16) takes each stage's shape from its ranks (members_shape).
std::vector<StageGroups> stage_groups(const IterationLayout& layout);

// A pipeline transfer from stage `from`'s simulated rank to stage `to`'s.
net::CommGroup stage_pair(const IterationLayout& layout, int from, int to);

}  // namespace trainsim::workload
