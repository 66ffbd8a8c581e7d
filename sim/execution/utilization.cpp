#include "execution/utilization.h"

#include <algorithm>
#include <vector>

namespace trainsim::exec {

ComputeBusy compute_busy(const SimulationOutput& out) {
  std::vector<bool> seen;  // by rank: it computed
  ComputeBusy b;
  for (const Span& span : out.timeline.spans) {
    const workload::Task& t = out.iteration.graph[span.task];
    if (t.stream != workload::Stream::kCompute) continue;
    b.total += span.end - span.start;
    const auto r = static_cast<std::size_t>(t.rank);
    if (r >= seen.size()) seen.resize(r + 1, false);
    if (!seen[r]) {
      seen[r] = true;
      ++b.ranks;
    }
  }
  return b;
}

double gpu_utilization(double busy_per_iteration_s, int ranks, double iteration_time_s) {
  if (ranks <= 0 || !(iteration_time_s > 0.0)) return 0.0;
  return std::min(1.0, busy_per_iteration_s / ranks / iteration_time_s);
}

}  // namespace trainsim::exec
