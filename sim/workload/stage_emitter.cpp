#include "workload/stage_emitter.h"

#include <utility>

namespace trainsim::workload {

namespace {

Stream stream_of(CommScope scope) {
  switch (scope) {
    case CommScope::kContext: return Stream::kCpComm;
    case CommScope::kExpert: return Stream::kEpComm;
    case CommScope::kTensor: break;
  }
  return Stream::kTpComm;
}

}  // namespace

const std::vector<Op>& CachedOps::fsdp_copy(const std::string& name, double bytes, long long layer,
                                            hw::HostPass pass) {
  const auto [it, added] = fsdp_copies_.try_emplace(name);
  if (added) it->second.push_back(ops_.fsdp_copy(name, bytes, layer, pass));
  return it->second;
}

const std::vector<WorkId>& StageEmitter::works_of(const std::vector<Op>& ops) {
  std::vector<WorkId>& works = works_[ops.data()];
  if (works.size() == ops.size()) return works;
  works.clear();
  works.reserve(ops.size());
  for (const Op& op : ops) {
    Work w;
    w.name = op.name;
    if (!op.comm_marker) {
      w.compute = op.work;
      w.model_flops = op.model_flops;
    } else if (op.comm_forward) {
      w.collective = net::Collective{*op.comm_forward, op.comm_bytes, groups_.of(op.scope), op.copy_engine};
    }
    works.push_back(graph_.add_work(std::move(w)));
  }
  return works;
}

std::vector<TaskId> StageEmitter::add(const std::vector<Op>& ops, Category category, Role role) {
  const std::vector<WorkId>& works = works_of(ops);
  std::vector<TaskId> ids;
  ids.reserve(ops.size());
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const Op& op = ops[i];
    if (op.comm_marker) {
      if (op.comm_forward && groups_.of(op.scope).size > 1) {
        if (!op.overlapped) last_ = add_comm(op, works[i]);
        else if (op.scope == CommScope::kExpert) expert_ring_.push_back(add_comm(op, works[i]));
        else ring_.push_back(add_comm(op, works[i]));
      } else {
        // No collective here: the next task waits instead.
        carried_waits_ += op.ring_waits;
        carried_expert_waits_ += op.expert_waits;
      }
      ids.push_back(last_.value_or(0));
      continue;
    }
    Task t;
    t.work = works[i];
    t.rank = rank_;
    t.stream = Stream::kCompute;
    t.category = category;
    t.role = role;
    t.iteration = iteration_;
    t.microbatch = microbatch_;
    t.layer = static_cast<std::int32_t>(op.layer);
    t.deps = std::move(pending_);
    pending_.clear();
    if (after_comm_) t.deps.push_back(*after_comm_);
    after_comm_.reset();
    wait_ring(op, t.deps);
    last_ = graph_.add(std::move(t));
    if (!first_) first_ = last_;
    ids.push_back(*last_);
  }
  return ids;
}

// The oldest op.ring_waits outstanding overlapped transfers and op.expert_waits
// all-to-alls (and any a marker without a collective passed on) become
// dependencies of the task being added.
void StageEmitter::wait_ring(const Op& op, TaskDeps& deps) {
  const auto take = [&](std::deque<TaskId>& ring, int waits) {
    for (int w = 0; w < waits && !ring.empty(); ++w) {
      deps.push_back(ring.front());
      ring.pop_front();
    }
  };
  take(ring_, op.ring_waits + carried_waits_);
  take(expert_ring_, op.expert_waits + carried_expert_waits_);
  carried_waits_ = 0;
  carried_expert_waits_ = 0;
}

// A blocking marker's collective starts after the compute before it and the
// next compute waits for it; an overlapped one runs beside that compute.
TaskId StageEmitter::add_comm(const Op& op, WorkId work) {
  Task t;
  t.work = work;
  t.rank = rank_;
  t.stream = stream_of(op.scope);
  t.category = category_of(*op.comm_forward);
  t.role = Role::kLayerCollective;
  t.iteration = iteration_;
  t.microbatch = microbatch_;
  t.layer = static_cast<std::int32_t>(op.layer);
  if (last_) t.deps.push_back(*last_);
  wait_ring(op, t.deps);
  if (!op.overlapped) {
    t.deps.append(pending_);
    pending_.clear();
  }
  const TaskId id = graph_.add(std::move(t));
  if (!first_) first_ = id;
  if (!op.overlapped) after_comm_ = id;
  return id;
}

}  // namespace trainsim::workload
