#include "execution/utilization.h"

#include <algorithm>
#include <vector>

namespace trainsim::exec {

ComputeBusy compute_busy(const SimulationOutput& out) {
  std::vector<int> ranks;  // the simulated ranks are few: a pipeline's stages at most twice
  ComputeBusy b;
  for (const Span& span : out.timeline.spans) {
    const workload::Task& t = out.iteration.graph[span.task];
    if (t.stream != workload::Stream::kCompute) continue;
    b.total += span.end - span.start;
    if (std::find(ranks.begin(), ranks.end(), t.rank) == ranks.end()) ranks.push_back(t.rank);
  }
  b.ranks = static_cast<int>(ranks.size());
  return b;
}

double gpu_utilization(double busy_per_iteration_s, int ranks, double iteration_time_s) {
  if (ranks <= 0 || !(iteration_time_s > 0.0)) return 0.0;
  return std::min(1.0, busy_per_iteration_s / ranks / iteration_time_s);
}

}  // namespace trainsim::exec
