#include "workload/expert_overlap.h"

namespace trainsim::workload {

namespace {

bool is_expert_all_to_all(const Op& op) {
  return op.comm_marker && op.scope == CommScope::kExpert &&
         (op.comm_forward == net::CollectiveKind::kAllToAll || op.comm_backward == net::CollectiveKind::kAllToAll);
}

}  // namespace

ExpertOverlapParts split_at_expert_all_to_alls(const std::vector<Op>& pass) {
  ExpertOverlapParts parts;
  std::size_t part = 0;
  for (const Op& op : pass) {
    if (is_expert_all_to_all(op) && part < 3) {
      part = part == 0 ? 1 : 3;
      Op transfer = op;
      transfer.overlapped = true;
      parts[part].push_back(std::move(transfer));
      ++part;
      continue;
    }
    parts[part].push_back(op);
    // The experts wait for the dispatched tokens, the rest of the layer for the combined ones.
    if (parts[part].size() == 1 && (part == 2 || part == 4)) ++parts[part].back().expert_waits;
  }
  return parts;
}

}  // namespace trainsim::workload
