#pragma once
// Copy descriptors: device-to-device (bytes read + written), host-to-device and
// device-to-host from pinned memory; and the launch overhead of an empty kernel.
#include "bench_context.h"

namespace trainsim::calibrate {

void bench_copies(BenchContext& ctx, double max_bytes);
void bench_launch_overhead(BenchContext& ctx);

}  // namespace trainsim::calibrate
