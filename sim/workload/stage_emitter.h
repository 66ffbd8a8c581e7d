#pragma once
// Turns op lists into tasks on one stage rank (docs/model.md, "Iteration"):
// compute ops on the compute stream, communication markers as collectives on
// their group's stream between them. CachedOps builds each op list once.
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "workload/ddp.h"
#include "workload/expert_overlap.h"
#include "workload/stage_groups.h"
#include "workload/task_graph.h"
#include "workload/transformer_ops.h"

namespace trainsim::workload {

// The op lists of a graph, each built once: a stage repeats a layer's lists for
// every micro-batch, and building them (names, FLOPs, bytes) costs more than
// adding their tasks (a strategy sweep builds thousands of graphs; docs/sweep.md).
class CachedOps {
 public:
  // A graph has one recompute granularity: the first layer_recompute() call's.
  // `ddp`: the PyTorch eager program under DDP, whose backward copies each gradient
  // into its bucket (workload/ddp.h).
  CachedOps(const TransformerOps& ops, long long layers, bool ddp = false)
      : ops_(ops), layers_(3 * static_cast<std::size_t>(layers)), parts_(2 * static_cast<std::size_t>(layers)),
        ddp_(ddp) {}

  const std::vector<Op>& layer_forward(long long l) { return layer(0, l, Recompute::kNone); }
  const std::vector<Op>& layer_backward(long long l) { return layer(1, l, Recompute::kNone); }
  const std::vector<Op>& layer_recompute(long long l, Recompute granularity) { return layer(2, l, granularity); }
  const std::vector<Op>& embedding_forward() { return once(embedding_forward_, &TransformerOps::embedding_forward); }
  const std::vector<Op>& embedding_backward() {
    return once(embedding_backward_, &TransformerOps::embedding_backward, ddp_);
  }
  const std::vector<Op>& head_forward() { return once(head_forward_, &TransformerOps::head_forward); }
  const std::vector<Op>& head_backward() { return once(head_backward_, &TransformerOps::head_backward, ddp_); }
  // FSDP2's copy `name` moving `bytes` (TransformerOps::fsdp_copy), built once per name.
  const std::vector<Op>& fsdp_copy(const std::string& name, double bytes, long long layer, hw::HostPass pass);
  [[nodiscard]] Op optimizer_step(const OptimizerScope& scope) const { return ops_.optimizer_step(scope); }
  // overlap_moe_expert_parallel_comm: part `part` of layer l's forward or backward
  // split at its expert all-to-alls (split_at_expert_all_to_alls).
  const std::vector<Op>& layer_part(long long l, bool forward, std::size_t part) {
    std::optional<ExpertOverlapParts>& slot = parts_[2 * static_cast<std::size_t>(l) + (forward ? 0 : 1)];
    if (!slot) slot = split_at_expert_all_to_alls(forward ? layer_forward(l) : layer_backward(l));
    return (*slot)[part];
  }

 private:
  const std::vector<Op>& layer(std::size_t kind, long long l, Recompute granularity) {
    std::optional<std::vector<Op>>& slot = layers_[3 * static_cast<std::size_t>(l) + kind];
    if (!slot)
      slot = kind == 0   ? ops_.layer_forward(l)
             : kind == 1 ? with_copies(ops_.layer_backward(l), ddp_)
                         : ops_.layer_recompute(l, granularity);
    return *slot;
  }
  const std::vector<Op>& once(std::optional<std::vector<Op>>& slot, std::vector<Op> (TransformerOps::*make)() const,
                              bool backward = false) {
    if (!slot) slot = with_copies((ops_.*make)(), backward && ddp_);
    return *slot;
  }
  static std::vector<Op> with_copies(std::vector<Op> ops, bool ddp) {
    if (!ddp) return ops;  // moved, not copied
    return with_ddp_bucket_copies(std::move(ops));
  }

  const TransformerOps& ops_;
  std::vector<std::optional<std::vector<Op>>> layers_;  // (forward, backward, recompute) per layer
  std::vector<std::optional<ExpertOverlapParts>> parts_;  // (forward, backward) per layer
  std::optional<std::vector<Op>> embedding_forward_, embedding_backward_, head_forward_, head_backward_;
  std::map<std::string, std::vector<Op>> fsdp_copies_;  // by name; map nodes stay put
  bool ddp_ = false;
};

// Emits the tasks of one stage rank: compute ops on the compute stream, the
// communication markers as collectives on their group's stream between them.
class StageEmitter {
 public:
  StageEmitter(TaskGraph& graph, int rank, ScopeGroups groups)
      : graph_(graph), rank_(rank), groups_(std::move(groups)) {}

  void set_context(int iteration, int microbatch) {
    iteration_ = iteration;
    microbatch_ = microbatch;
  }
  [[nodiscard]] int rank() const { return rank_; }
  [[nodiscard]] int iteration() const { return iteration_; }
  [[nodiscard]] int microbatch() const { return microbatch_; }
  // Starts a pass: first() is then the first task added after this call.
  void begin_pass() { first_.reset(); }
  [[nodiscard]] TaskId first() const { return first_.value_or(0); }

  // Adds `ops` as tasks of `role` in pass `category`; returns the id of each op's
  // task (markers without a collective in this direction get the id of the task
  // before them). `ops` is one of CachedOps' lists: its ops' works are
  // registered in the graph on the first call with it and shared after.
  std::vector<TaskId> add(const std::vector<Op>& ops, Category category, Role role);

  [[nodiscard]] TaskId last() const { return last_.value_or(0); }
  [[nodiscard]] std::optional<TaskId> last_task() const { return last_; }
  // The next task added waits for `id` too (a parameter gather on another stream).
  void wait_for(TaskId id) { pending_.push_back(id); }

 private:
  // A blocking marker's collective starts after the compute before it and the
  // next compute waits for it; an overlapped one runs beside that compute.
  TaskId add_comm(const Op& op, WorkId work);
  void wait_ring(const Op& op, TaskDeps& deps);
  // The works of a list's ops (an op's collective, or its kernel), registered once.
  const std::vector<WorkId>& works_of(const std::vector<Op>& ops);

  TaskGraph& graph_;
  int rank_;
  ScopeGroups groups_;
  // CachedOps' lists by address (they stay put and unchanged for the graph's build).
  std::unordered_map<const Op*, std::vector<WorkId>> works_;
  std::deque<TaskId> ring_;         // overlapped ring transfers not yet waited for
  std::deque<TaskId> expert_ring_;  // overlapped expert-parallel all-to-alls not yet waited for
  int carried_waits_ = 0;           // ring and expert waits of markers that ran no collective
  int carried_expert_waits_ = 0;
  int iteration_ = 0;
  int microbatch_ = -1;
  std::vector<TaskId> pending_;
  std::optional<TaskId> after_comm_;
  std::optional<TaskId> last_;
  std::optional<TaskId> first_;
};

}  // namespace trainsim::workload
