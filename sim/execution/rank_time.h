#pragma once
// Where one simulated rank's time went over the simulated iterations
// (docs/results.md, "breakdown"): the compute stream's kernels, the
// communication it leaves exposed (|compute U comm| - |compute|: communication
// running while the compute stream is idle), for all streams together and
// stream by stream, and the time both are idle. The run's breakdown (report)
// and the sweep's bottleneck attribution read it from here.
#include "core/time.h"
#include "execution/simulate.h"

namespace trainsim::exec {

struct RankTime {
  core::Time compute = 0;    // forward, backward and recomputation kernels
  core::Time recompute = 0;  // of which recomputation
  core::Time optimizer = 0;  // the optimizer step's kernels
  core::Time exposed = 0;    // every communication stream together
  core::Time exposed_tp = 0;     // the tensor-parallel stream alone
  core::Time exposed_dp = 0;     // the data-parallel stream alone
  core::Time exposed_other = 0;  // the pipeline, context- and expert-parallel streams together
  core::Time idle = 0;           // makespan - |compute U comm|: nothing runs
};

// Totals over every simulated iteration (divide by out.iteration.iterations).
RankTime rank_time(const SimulationOutput& out, int rank);

}  // namespace trainsim::exec
