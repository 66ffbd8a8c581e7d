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

std::vector<TaskId> StageEmitter::add(const std::vector<Op>& ops, Category category, Role role) {
  std::vector<TaskId> ids;
  ids.reserve(ops.size());
  for (const Op& op : ops) {
    if (op.comm_marker) {
      if (op.comm_forward && groups_.of(op.scope).size > 1) {
        if (op.overlapped) ring_.push_back(add_comm(op));
        else last_ = add_comm(op);
      }
      ids.push_back(last_.value_or(0));
      continue;
    }
    Task t;
    t.name = op.name;
    t.rank = rank_;
    t.stream = Stream::kCompute;
    t.category = category;
    t.role = role;
    t.compute = op.work;
    t.iteration = iteration_;
    t.microbatch = microbatch_;
    t.layer = op.layer;
    t.model_flops = op.model_flops;
    t.deps = std::move(pending_);
    pending_.clear();
    if (after_comm_) t.deps.push_back(*after_comm_);
    after_comm_.reset();
    if (op.waits_for_ring && !ring_.empty()) {
      t.deps.push_back(ring_.front());
      ring_.pop_front();
    }
    last_ = graph_.add(std::move(t));
    if (!first_) first_ = last_;
    ids.push_back(*last_);
  }
  return ids;
}

// A blocking marker's collective starts after the compute before it and the
// next compute waits for it; an overlapped one runs beside that compute.
TaskId StageEmitter::add_comm(const Op& op) {
  Task t;
  t.name = op.name;
  t.rank = rank_;
  t.stream = stream_of(op.scope);
  t.category = category_of(*op.comm_forward);
  t.role = Role::kLayerCollective;
  t.collective = net::Collective{*op.comm_forward, op.comm_bytes, groups_.of(op.scope)};
  t.iteration = iteration_;
  t.microbatch = microbatch_;
  t.layer = op.layer;
  if (last_) t.deps.push_back(*last_);
  if (!op.overlapped) {
    t.deps.insert(t.deps.end(), pending_.begin(), pending_.end());
    pending_.clear();
  }
  const TaskId id = graph_.add(std::move(t));
  if (!first_) first_ = id;
  if (!op.overlapped) after_comm_ = id;
  return id;
}

}  // namespace trainsim::workload
