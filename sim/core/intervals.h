#pragma once
// Lengths of unions of time intervals: a stream's busy time, and the time a second
// stream adds to it (exposed communication = |compute U comm| - |compute|: the
// simulation's, execution/rank_time.h, and a profiler trace's, scenario/torch_trace.h).
#include <utility>
#include <vector>

#include "core/time.h"

namespace trainsim::core {

using Interval = std::pair<Time, Time>;  // [start, end)

// Total length of the union of `v` (sorted here unless already in order: a lane's
// spans come in time order, and sorting them again is most of a small run's metrics).
[[nodiscard]] Time union_length(std::vector<Interval> v);

}  // namespace trainsim::core
