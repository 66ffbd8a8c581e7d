#pragma once
// Our kernels (kernels/) over sizes: rows "kernels" of the profile, with the fewest
// HBM bytes each moves (kernels/reference byte counts) and, for attention, FLOPs.
// Inputs rotate among enough copies to exceed twice the L2, so every repetition
// reads from HBM as a training step does.
#include "bench_context.h"

namespace trainsim::calibrate {

void bench_kernels(BenchContext& ctx);

}  // namespace trainsim::calibrate
