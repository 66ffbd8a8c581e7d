#pragma once
// GEMM descriptor: times the cuBLASLt wrapper over a grid of shapes (or exact shapes)
// per dtype, L2 flushed before each repetition; rows "gemm" of the profile.
#include <vector>

#include "bench_context.h"
#include "shape_list.h"
#include "trainsim/kernels/gemm.h"

namespace trainsim::calibrate {

// The sweep's grid for a dtype, in one layout: powers of two, smaller for the slow
// fp32 paths.
[[nodiscard]] std::vector<GemmShape> gemm_grid(kernels::GemmDtype dtype,
                                               kernels::GemmLayout layout = kernels::GemmLayout::kForward);

// Each shape in its own layout; fp8 runs forward_only(shapes) (shape_list.h).
void bench_gemms(BenchContext& ctx, kernels::GemmDtype dtype, const std::vector<GemmShape>& shapes,
                 kernels::Fp8Scaling fp8_scaling = kernels::Fp8Scaling::kPerTensor);

}  // namespace trainsim::calibrate
