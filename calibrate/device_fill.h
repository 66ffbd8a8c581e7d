#pragma once
// Fills device buffers with reproducible pseudo-random values (a hash of the index
// and a seed), uniform in [-1, 1), in the element type of a GEMM dtype. Never zeros:
// zeros run faster than real data on tensor cores.
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "trainsim/kernels/gemm.h"

namespace trainsim::calibrate {

void fill_random(void* data, std::size_t count, kernels::GemmDtype element, std::uint32_t seed, cudaStream_t stream);
// Floats of value (rank + 1) * ((offset + i) % 7 + 1), for collective correctness checks.
void fill_pattern(float* data, std::size_t count, int rank, std::size_t offset, cudaStream_t stream);
// Counts elements differing from scale * ((offset + i) % 7 + 1) into *wrong (device).
void count_wrong(const float* data, std::size_t count, float scale, std::size_t offset, unsigned long long* wrong,
                 cudaStream_t stream);
// An empty kernel, for the launch overhead.
void launch_empty(cudaStream_t stream);

}  // namespace trainsim::calibrate
