// Residual add, out = a + b (fp32 add, one rounding to bf16); see elementwise.h.
// Grid-stride over 16-byte vectors when every pointer is 16-byte aligned (the tail and
// unaligned tensors go element by element). out may alias a or b: each element is read and
// written by the same thread.
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

template <bool kVectors>
__global__ void __launch_bounds__(kThreads) residual_forward_kernel(__nv_bfloat16* out,      // (n)
                                                                    const __nv_bfloat16* a,  // (n)
                                                                    const __nv_bfloat16* b,  // (n)
                                                                    std::size_t n) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  const std::size_t tid = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  std::size_t scalar_begin = 0;
  if constexpr (kVectors) {
    const std::size_t vecs = n / kVec;
    for (std::size_t i = tid; i < vecs; i += stride) {
      float x[kVec], y[kVec];
      load_bf16x8(a + i * kVec, x);
      load_bf16x8(b + i * kVec, y);
#pragma unroll
      for (int k = 0; k < kVec; ++k) x[k] += y[k];
      store_bf16x8(out + i * kVec, x);
    }
    scalar_begin = vecs * kVec;
  }
  for (std::size_t i = scalar_begin + tid; i < n; i += stride)
    out[i] = __float2bfloat16_rn(__bfloat162float(a[i]) + __bfloat162float(b[i]));
}

unsigned flat_blocks(std::size_t work) { return launch::flat_blocks(work, kThreads, kMaxBlocks); }

}  // namespace

void residual_forward(__nv_bfloat16* out, const __nv_bfloat16* a, const __nv_bfloat16* b, std::size_t n,
                      cudaStream_t stream) {
  constexpr const char* what = "residual_forward";
  require(n > 0, what, "n must be positive, got 0");
  require(out != nullptr, what, "out is null");
  require(a != nullptr, what, "a is null");
  require(b != nullptr, what, "b is null");
  if (aligned16(out) && aligned16(a) && aligned16(b))
    residual_forward_kernel<true><<<flat_blocks(n / kVec), kThreads, 0, stream>>>(out, a, b, n);
  else
    residual_forward_kernel<false><<<flat_blocks(n), kThreads, 0, stream>>>(out, a, b, n);
  TRAINSIM_CUDA_CHECK(cudaGetLastError());
}

}  // namespace trainsim::kernels
