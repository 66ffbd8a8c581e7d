#pragma once
// What ran where and when: one span per executed task (times in integer ns).
#include <vector>

#include "core/time.h"
#include "workload/task_graph.h"

namespace trainsim::exec {

struct Span {
  workload::TaskId task = 0;
  // The task's rank, copied here (in what would be padding) so that the passes
  // over one rank's spans (rank_time, track_memory, the timeline writer) read no
  // other task: a large run has millions of spans in completion order, far from
  // the graph's.
  int rank = 0;
  core::Time start = 0;
  core::Time end = 0;
};

struct Timeline {
  std::vector<Span> spans;  // in completion order
  core::Time makespan = 0;
};

}  // namespace trainsim::exec
