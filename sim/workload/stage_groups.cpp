#include "workload/stage_groups.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <utility>

#include "workload/layout.h"

namespace trainsim::workload {

net::CommGroup explicit_group(const net::CommGroup& shape, Members groups) {
  net::CommGroup g = shape;
  g.members = std::make_shared<const Members>(std::move(groups));
  return g;
}

net::CommGroup pair_shape(bool across_nodes) {
  return net::CommGroup{2, across_nodes ? 2 : 1, across_nodes ? 1 : 2, nullptr};
}

net::CommGroup stage_pair(const IterationLayout& layout, int from, int to) {
  const long long a = layout.rank_of_stage(from);
  const long long b = layout.rank_of_stage(to);
  return explicit_group(pair_shape(a / layout.gpus_per_domain != b / layout.gpus_per_domain), {{a, b}});
}

namespace {

// The shapes of a stage's groups: TP peers are adjacent; their copies on other
// nodes share no link, so they are listed only when the group spans nodes. DP
// peers are tp ranks apart; the tp copies of a DP group share the NICs.
struct Shapes {
  net::CommGroup tensor;
  std::optional<net::CommGroup> data;  // none: the group does not tile the nodes
  net::CommGroup context;
  std::optional<net::CommGroup> expert;
};

class StageRanks {
 public:
  StageRanks(const IterationLayout& l, int stage) : l_(l), stage_(stage) {}
  // The rank with TP index i, context index c and data-parallel index x.
  [[nodiscard]] long long at(int i, int c, int x) const {
    return rank(i + static_cast<long long>(l_.tp) * (c + static_cast<long long>(l_.cp) * x));
  }
  // The rank with in-stage index k (IterationLayout::rank).
  [[nodiscard]] long long rank(long long k) const { return l_.rank(stage_, k); }

  [[nodiscard]] net::CommGroup tensor(const net::CommGroup& shape) const {
    Members tps;
    for (int d = 0; d < (shape.nodes > 1 ? l_.dense_dp : 1); ++d) {
      tps.emplace_back();
      for (int i = 0; i < l_.tp; ++i) tps.back().push_back(rank(static_cast<long long>(d) * l_.tp + i));
    }
    return explicit_group(shape, std::move(tps));
  }

  // Ring attention: every context rank sends to the next at once; a pair that
  // crosses nodes (the ring's wrap-around) goes first so the analytic model
  // prices the slowest link.
  [[nodiscard]] net::CommGroup context(const net::CommGroup& shape) const {
    Members pairs;
    for (int i = 0; i < (shape.nodes > 1 ? l_.tp : 1); ++i)
      for (int c = 0; c < l_.cp; ++c) pairs.push_back({at(i, c, 0), at(i, (c + 1) % l_.cp, 0)});
    const int gpn = l_.gpus_per_domain;
    const auto crosses = [&](const std::vector<long long>& pair) { return pair[0] / gpn != pair[1] / gpn; };
    const auto first_across = std::find_if(pairs.begin(), pairs.end(), crosses);
    if (first_across != pairs.end()) std::iter_swap(pairs.begin(), first_across);
    const bool across = crosses(pairs.front());
    return explicit_group(pair_shape(across), std::move(pairs));
  }

  // Ulysses all-to-all (cp_comm_type "a2a"): the whole context-parallel group of each
  // TP index (all of them at once when the group spans nodes).
  [[nodiscard]] net::CommGroup context_all(const net::CommGroup& shape) const {
    Members groups;
    for (int i = 0; i < (shape.nodes > 1 ? l_.tp : 1); ++i) {
      groups.emplace_back();
      for (int c = 0; c < l_.cp; ++c) groups.back().push_back(at(i, c, 0));
    }
    return explicit_group(shape, std::move(groups));
  }

  [[nodiscard]] net::CommGroup expert(const std::optional<net::CommGroup>& shape) const {
    const net::CommGroup s = shape ? *shape : members_shape(expert_members(0, 0), l_.gpus_per_domain);
    Members eps;
    for (int i = 0; i < (s.nodes > 1 ? l_.tp : 1); ++i)
      for (int c = 0; c < (s.nodes > 1 ? l_.cp : 1); ++c) eps.push_back(expert_members(i, c));
    return explicit_group(s, std::move(eps));
  }
  // The expert-parallel group of TP index i and context index c.
  [[nodiscard]] std::vector<long long> expert_members(int i, int c) const {
    std::vector<long long> group;
    for (int x = 0; x < l_.ep; ++x) group.push_back(at(i, c, x));
    return group;
  }

  // Folded experts (IterationLayout::folded_experts): expert-parallel peers are
  // the ep adjacent ranks of a block, the stage's blocks hold the same experts.
  [[nodiscard]] net::CommGroup folded_expert(const net::CommGroup& shape) const {
    Members eps(1);
    for (int x = 0; x < l_.ep; ++x) eps.back().push_back(rank(x));
    return explicit_group(shape, std::move(eps));
  }
  [[nodiscard]] net::CommGroup folded_expert_data() const {
    Members edps;
    for (int x = 0; x < l_.ep; ++x) {
      edps.emplace_back();
      for (int d = 0; d < l_.expert_dp; ++d) edps.back().push_back(rank(x + static_cast<long long>(l_.ep) * d));
    }
    const net::CommGroup shape = members_shape(edps.front(), l_.gpus_per_domain);
    return explicit_group(shape, std::move(edps));
  }

  // `shape`: the regular one, or none when the group does not tile the nodes (then
  // this stage's members give it: docs/strategies.md, "Groups that do not tile nodes").
  [[nodiscard]] net::CommGroup data(const std::optional<net::CommGroup>& shape) const {
    Members dps;
    for (int i = 0; i < l_.tp; ++i) {
      dps.emplace_back();
      for (int d = 0; d < l_.dense_dp; ++d) dps.back().push_back(rank(i + static_cast<long long>(d) * l_.tp));
    }
    const net::CommGroup s = shape ? *shape : members_shape(dps.front(), l_.gpus_per_domain);
    return explicit_group(s, std::move(dps));
  }

  // The ranks holding the same experts (same place x in their expert-parallel
  // group), over all context ranks.
  [[nodiscard]] net::CommGroup expert_data() const {
    Members edps;
    for (int i = 0; i < l_.tp; ++i)
      for (int x = 0; x < l_.ep; ++x) {
        edps.emplace_back();
        for (int d = 0; d < l_.dp / l_.ep; ++d)
          for (int c = 0; c < l_.cp; ++c) edps.back().push_back(at(i, c, x + l_.ep * d));
      }
    const net::CommGroup shape = members_shape(edps.front(), l_.gpus_per_domain);
    return explicit_group(shape, std::move(edps));
  }

 private:
  const IterationLayout& l_;
  int stage_;
};

}  // namespace

std::vector<StageGroups> stage_groups(const IterationLayout& l) {
  const int gpn = l.gpus_per_domain;
  // A group that tiles the nodes has one shape on every stage; one that does not
  // (39 data-parallel ranks on nodes of 16, say) takes each stage's from its members.
  const auto regular = [gpn](int size, long long stride) -> std::optional<net::CommGroup> {
    if (!tiles_nodes(size, stride, gpn)) return std::nullopt;
    return group_shape(size, stride, gpn);
  };
  Shapes shape;
  shape.tensor = group_shape(l.tp, 1, gpn);
  // Data-parallel peers are tp ranks apart (tp-cp-ep-dp-pp) or tp pp (tp-pp-dp).
  shape.data = regular(l.dense_dp, l.rank(0, l.tp) - l.rank(0, 0));
  if (l.cp > 1) shape.context = group_shape(l.cp, l.tp, gpn);
  shape.expert = regular(l.ep, static_cast<long long>(l.tp) * l.cp);
  std::vector<StageGroups> out;
  for (int s = 0; s < l.pp; ++s) {
    const StageRanks ranks(l, s);
    StageGroups g;
    g.scope.tensor = ranks.tensor(shape.tensor);
    if (l.cp > 1)
      g.scope.context = l.whole_context_group ? ranks.context_all(shape.context) : ranks.context(shape.context);
    if (l.ep > 1) g.scope.expert = l.folded_experts ? ranks.folded_expert(group_shape(l.ep, 1, gpn))
                                                    : ranks.expert(shape.expert);
    g.data = ranks.data(shape.data);
    if (l.ep > 1 && l.expert_dp > 1)
      g.expert_data = l.folded_experts ? ranks.folded_expert_data() : ranks.expert_data();
    else
      g.expert_data = g.data;
    if (l.pp > 1) {
      g.to_next = stage_pair(l, s, (s + 1) % l.pp);
      g.to_previous = stage_pair(l, s, (s - 1 + l.pp) % l.pp);
    }
    out.push_back(std::move(g));
  }
  return out;
}

}  // namespace trainsim::workload
