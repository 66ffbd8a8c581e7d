// GELU with the tanh approximation (as GPT-2), forward and backward; see elementwise.h.
// Flat elementwise kernels: grid-stride over 16-byte vectors when every pointer is 16-byte
// aligned (the tail and unaligned tensors go element by element). Each element is read and
// written by the same thread, so the kernels may run in place.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "launch_checks.h"
#include "trainsim/kernels/cuda_check.h"
#include "trainsim/kernels/elementwise.h"
#include "bf16x8.cuh"

namespace trainsim::kernels {
namespace {

using launch::require;
using launch::aligned16;

constexpr int kVec = 8;  // bf16 elements in one 16-byte vector
constexpr int kThreads = 256;
constexpr std::size_t kMaxBlocks = 4096;  // grid-stride beyond 1M threads (H200: 270K resident)

// gelu(x) = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))  (Hendrycks & Gimpel 2016)
constexpr float kSqrt2OverPi = 0.7978845608028654f;
constexpr float kCubic = 0.044715f;

__device__ __forceinline__ float gelu(float x) {
  return 0.5f * x * (1.0f + tanhf(kSqrt2OverPi * (x + kCubic * x * x * x)));
}

__device__ __forceinline__ float gelu_derivative(float x) {
  const float th = tanhf(kSqrt2OverPi * (x + kCubic * x * x * x));
  const float du = kSqrt2OverPi * (1.0f + 3.0f * kCubic * x * x);
  return 0.5f * (1.0f + th) + 0.5f * x * (1.0f - th * th) * du;
}

template <bool kVectors>
__global__ void __launch_bounds__(kThreads)
    gelu_forward_kernel(__nv_bfloat16* out, const __nv_bfloat16* inp, std::size_t n) {  // (n), (n)
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  const std::size_t tid = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  std::size_t scalar_begin = 0;
  if constexpr (kVectors) {
    const std::size_t vecs = n / kVec;
    for (std::size_t i = tid; i < vecs; i += stride) {
      float f[kVec];
      load_bf16x8(inp + i * kVec, f);
#pragma unroll
      for (int k = 0; k < kVec; ++k) f[k] = gelu(f[k]);
      store_bf16x8(out + i * kVec, f);
    }
    scalar_begin = vecs * kVec;
  }
  for (std::size_t i = scalar_begin + tid; i < n; i += stride)
    out[i] = __float2bfloat16_rn(gelu(__bfloat162float(inp[i])));
}

template <bool kVectors>
__global__ void __launch_bounds__(kThreads) gelu_backward_kernel(__nv_bfloat16* dinp,        // (n)
                                                                 const __nv_bfloat16* inp,   // (n)
                                                                 const __nv_bfloat16* dout,  // (n)
                                                                 std::size_t n) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  const std::size_t tid = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  std::size_t scalar_begin = 0;
  if constexpr (kVectors) {
    const std::size_t vecs = n / kVec;
    for (std::size_t i = tid; i < vecs; i += stride) {
      float x[kVec], g[kVec];
      load_bf16x8(inp + i * kVec, x);
      load_bf16x8(dout + i * kVec, g);
#pragma unroll
      for (int k = 0; k < kVec; ++k) g[k] *= gelu_derivative(x[k]);
      store_bf16x8(dinp + i * kVec, g);
    }
    scalar_begin = vecs * kVec;
  }
  for (std::size_t i = scalar_begin + tid; i < n; i += stride)
    dinp[i] = __float2bfloat16_rn(__bfloat162float(dout[i]) * gelu_derivative(__bfloat162float(inp[i])));
}

unsigned flat_blocks(std::size_t work) { return launch::flat_blocks(work, kThreads, kMaxBlocks); }

}  // namespace

void gelu_forward(__nv_bfloat16* out, const __nv_bfloat16* inp, std::size_t n, cudaStream_t stream) {
  constexpr const char* what = "gelu_forward";
  require(n > 0, what, "n must be positive, got 0");
  require(out != nullptr, what, "out is null");
  require(inp != nullptr, what, "inp is null");
  if (aligned16(out) && aligned16(inp))
    gelu_forward_kernel<true><<<flat_blocks(n / kVec), kThreads, 0, stream>>>(out, inp, n);
  else
    gelu_forward_kernel<false><<<flat_blocks(n), kThreads, 0, stream>>>(out, inp, n);
  TRAINSIM_CUDA_CHECK(cudaGetLastError());
}

void gelu_backward(__nv_bfloat16* dinp, const __nv_bfloat16* inp, const __nv_bfloat16* dout, std::size_t n,
                   cudaStream_t stream) {
  constexpr const char* what = "gelu_backward";
  require(n > 0, what, "n must be positive, got 0");
  require(dinp != nullptr, what, "dinp is null");
  require(inp != nullptr, what, "inp is null");
  require(dout != nullptr, what, "dout is null");
  if (aligned16(dinp) && aligned16(inp) && aligned16(dout))
    gelu_backward_kernel<true><<<flat_blocks(n / kVec), kThreads, 0, stream>>>(dinp, inp, dout, n);
  else
    gelu_backward_kernel<false><<<flat_blocks(n), kThreads, 0, stream>>>(dinp, inp, dout, n);
  TRAINSIM_CUDA_CHECK(cudaGetLastError());
}

}  // namespace trainsim::kernels
