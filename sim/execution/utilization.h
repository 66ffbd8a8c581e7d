#pragma once
// How busy the GPUs are, for their power draw (docs/model.md, "Energy"): the
// compute stream's busy time over the iteration, averaged over the simulated
// ranks. report::compute_metrics, the full-run replay and the sweep's micro-batch
// extrapolation take it from here, so their energies agree.
#include "core/time.h"
#include "execution/simulate.h"

namespace trainsim::exec {

// Compute-stream busy time of a simulation (all its iterations), summed over
// the simulated ranks that compute, and how many those are.
struct ComputeBusy {
  core::Time total = 0;
  int ranks = 0;
};
ComputeBusy compute_busy(const SimulationOutput& out);

// u = busy_per_iteration_s / ranks / iteration_time_s, at most 1; 0 when no
// rank computes. busy_per_iteration_s: ComputeBusy::total in seconds over the
// iterations simulated.
double gpu_utilization(double busy_per_iteration_s, int ranks, double iteration_time_s);

}  // namespace trainsim::exec
