#pragma once
// What ran where and when: one span per executed task (times in integer ns).
#include <vector>

#include "core/time.h"
#include "workload/task_graph.h"

namespace trainsim::exec {

struct Span {
  workload::TaskId task = 0;
  core::Time start = 0;
  core::Time end = 0;
};

struct Timeline {
  std::vector<Span> spans;  // in completion order
  core::Time makespan = 0;
};

}  // namespace trainsim::exec
