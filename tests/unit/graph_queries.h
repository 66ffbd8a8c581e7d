#pragma once
// Looking tasks up in a built iteration graph, for the tests that check its
// dependencies (tensor parallelism, its overlap) and what its gathers move.
#include <algorithm>
#include <stdexcept>
#include <string>

#include "workload/task_graph.h"

namespace trainsim::testing {

// Rank 0's task of micro-batch 0 named `name`.
inline const workload::Task& task_named(const workload::TaskGraph& g, const std::string& name) {
  for (const workload::Task& t : g.tasks())
    if (t.rank == 0 && t.microbatch == 0 && g.work(t).name == name) return t;
  throw std::runtime_error("no task " + name);
}

// Whether `task` waits for `dep` (both tasks of `g`).
inline bool waits_for(const workload::TaskGraph& g, const workload::Task& task, const workload::Task& dep) {
  const auto id = static_cast<workload::TaskId>(&dep - g.tasks().data());
  return std::find(task.deps.begin(), task.deps.end(), id) != task.deps.end();
}

// Bytes rank 0's parameter all-gathers move in `g` (ZeRO's gathers).
inline double parameter_gather_bytes(const workload::TaskGraph& g) {
  double bytes = 0.0;
  for (const workload::Task& t : g.tasks())
    if (t.rank == 0 && t.role == workload::Role::kParameterGather) bytes += g.work(t).collective->bytes;
  return bytes;
}

}  // namespace trainsim::testing
