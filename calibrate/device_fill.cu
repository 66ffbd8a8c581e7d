#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include "device_fill.h"
#include "trainsim/kernels/cuda_check.h"

namespace trainsim::calibrate {

namespace {

__device__ float hash_uniform(std::size_t i, std::uint32_t seed) {
  std::uint32_t x = static_cast<std::uint32_t>(i) * 0x9E3779B1u ^ static_cast<std::uint32_t>(i >> 32) ^ seed;
  x ^= x >> 16;
  x *= 0x7feb352dU;
  x ^= x >> 15;
  x *= 0x846ca68bU;
  x ^= x >> 16;
  return static_cast<float>(x) * (2.0F / 4294967296.0F) - 1.0F;
}

template <typename T>
__global__ void fill_kernel(T* data, std::size_t count, std::uint32_t seed) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    data[i] = T(hash_uniform(i, seed));
}

__global__ void pattern_kernel(float* data, std::size_t count, int rank, std::size_t offset) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    data[i] = static_cast<float>(rank + 1) * static_cast<float>((offset + i) % 7 + 1);
}

__global__ void wrong_kernel(const float* data, std::size_t count, float scale, std::size_t offset,
                             unsigned long long* wrong) {
  unsigned long long local = 0;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    if (data[i] != scale * static_cast<float>((offset + i) % 7 + 1)) ++local;
  if (local > 0) atomicAdd(wrong, local);
}

__global__ void empty_kernel() {}

constexpr int kThreads = 256;
constexpr int kBlocks = 1024;

}  // namespace

void fill_random(void* data, std::size_t count, kernels::GemmDtype element, std::uint32_t seed, cudaStream_t stream) {
  switch (element) {
    case kernels::GemmDtype::kFp32:
    case kernels::GemmDtype::kTf32:
      fill_kernel<<<kBlocks, kThreads, 0, stream>>>(static_cast<float*>(data), count, seed);
      break;
    case kernels::GemmDtype::kFp16:
      fill_kernel<<<kBlocks, kThreads, 0, stream>>>(static_cast<__half*>(data), count, seed);
      break;
    case kernels::GemmDtype::kBf16:
      fill_kernel<<<kBlocks, kThreads, 0, stream>>>(static_cast<__nv_bfloat16*>(data), count, seed);
      break;
    case kernels::GemmDtype::kFp8:
    case kernels::GemmDtype::kFp8Fast:
      fill_kernel<<<kBlocks, kThreads, 0, stream>>>(static_cast<__nv_fp8_e4m3*>(data), count, seed);
      break;
  }
  TRAINSIM_CUDA_CHECK(cudaGetLastError());
}

void fill_pattern(float* data, std::size_t count, int rank, std::size_t offset, cudaStream_t stream) {
  pattern_kernel<<<kBlocks, kThreads, 0, stream>>>(data, count, rank, offset);
  TRAINSIM_CUDA_CHECK(cudaGetLastError());
}

void count_wrong(const float* data, std::size_t count, float scale, std::size_t offset, unsigned long long* wrong,
                 cudaStream_t stream) {
  wrong_kernel<<<kBlocks, kThreads, 0, stream>>>(data, count, scale, offset, wrong);
  TRAINSIM_CUDA_CHECK(cudaGetLastError());
}

void launch_empty(cudaStream_t stream) {
  empty_kernel<<<1, 1, 0, stream>>>();
  TRAINSIM_CUDA_CHECK(cudaGetLastError());
}

}  // namespace trainsim::calibrate
