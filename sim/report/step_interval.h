#pragma once
// The iteration time as a distribution (docs/model.md, "Step-time variability"):
// a synchronous step waits for its slowest GPU, so the spread of the GPUs' speed
// and of their kernels' times makes the step slower the more GPUs it has.
#include <optional>

#include "report/metrics.h"

namespace trainsim::report {

// The P10, P50 and P90 of the iteration time
//   T_q = T + V s Phi^-1(q^(1/R)),   s = sqrt(sigma_g^2 + c^2 / K),
// where T is the simulated (nominal) iteration time and V = compute + optimizer
// + pipeline bubble of its breakdown: the part the slowest of R GPUs stretches.
// Exposed communication and idle time stay as simulated. Nothing for an
// asynchronous mode (its workers do not wait for each other).
std::optional<StepInterval> step_interval(double iteration_time_s, const Breakdown& b, double kernels_per_step,
                                          long long gpus, double gpu_speed_spread, double kernel_time_cv);

}  // namespace trainsim::report
