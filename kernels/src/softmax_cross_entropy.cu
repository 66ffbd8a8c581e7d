// Fused softmax + cross-entropy over the vocabulary, writing the per-row loss and the
// logits' gradient in one kernel (as llm.c's fused classifier); see elementwise.h.
//
// One block per row. Pass 1 reads the row once with an online max/sum-of-exponentials
// (Milakov & Gimelshein 2018, "Online normalizer calculation for softmax"), reduced over the
// block; pass 2 re-reads the row (mostly from L2) and writes (softmax - onehot) * scale.
// The target logit is read before pass 2, so dlogits may overwrite logits in place.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

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
constexpr int kThreads = 512;
constexpr int kWarps = kThreads / 32;
constexpr int kMaxBlocks = 65535;  // grid-stride over rows beyond this

// (m, s) stands for sum_i exp(x_i - m). Merging two such pairs rescales both to the larger
// maximum; a pair that saw no element is (-inf, 0) and contributes nothing.
__device__ __forceinline__ void merge(float& m, float& s, float m2, float s2) {
  const float mx = fmaxf(m, m2);
  if (mx == -INFINITY) return;  // both empty; exp(-inf - -inf) would be NaN
  s = s * expf(m - mx) + s2 * expf(m2 - mx);
  m = mx;
}

// Adds one element x to (m, s). A -inf logit (a masked column) adds nothing; NaN propagates.
__device__ __forceinline__ void add_one(float& m, float& s, float x) {
  if (x > m) {
    s = s * expf(m - x) + 1.0f;  // m == -inf (nothing yet): s == 0 stays 0
    m = x;
  } else if (x != -INFINITY) {
    s += expf(x - m);
  }
}

template <bool kVectors>
__global__ void __launch_bounds__(kThreads) softmax_cross_entropy_kernel(float* losses,                // (rows)
                                                                         __nv_bfloat16* dlogits,       // (rows, Vp)
                                                                         const __nv_bfloat16* logits,  // (rows, Vp)
                                                                         const int* targets,           // (rows)
                                                                         int rows, int V, int Vp, float dloss_scale) {
  __shared__ float warp_max[kWarps];
  __shared__ float warp_sum[kWarps];
  __shared__ float row_max;
  __shared__ float row_sum;
  const int tid = static_cast<int>(threadIdx.x);
  const int lane = tid % 32;
  const int warp = tid / 32;
  // Columns [0, vec_end) go as 16-byte vectors, [vec_end, Vp) element by element.
  const int vec_end = kVectors ? V / kVec * kVec : 0;

  for (int row = static_cast<int>(blockIdx.x); row < rows; row += static_cast<int>(gridDim.x)) {
    const std::size_t offset = static_cast<std::size_t>(row) * static_cast<std::size_t>(Vp);
    const __nv_bfloat16* x = logits + offset;
    __nv_bfloat16* dx = dlogits + offset;
    const int target = targets[row];
    const bool valid_target = target >= 0 && target < V;
    float target_logit = 0.0f;
    if (tid == 0 && valid_target) target_logit = __bfloat162float(x[target]);  // before pass 2 writes

    // Pass 1: this thread's (max, sum of exp) over its columns.
    float m = -INFINITY;
    float s = 0.0f;
    if constexpr (kVectors) {
      for (int i = tid * kVec; i < vec_end; i += kThreads * kVec) {
        float f[kVec];
        load_bf16x8(x + i, f);
        float m8 = f[0];
#pragma unroll
        for (int k = 1; k < kVec; ++k) m8 = fmaxf(m8, f[k]);
        if (m8 == -INFINITY) continue;  // all eight masked
        float s8 = 0.0f;
#pragma unroll
        for (int k = 0; k < kVec; ++k) s8 += expf(f[k] - m8);
        merge(m, s, m8, s8);
      }
    }
    for (int i = vec_end + tid; i < V; i += kThreads) add_one(m, s, __bfloat162float(x[i]));

      // Block reduction of (m, s): within warps, then warp 0 over the warps' results.
#pragma unroll
    for (int offset_lanes = 16; offset_lanes > 0; offset_lanes /= 2) {
      const float m2 = __shfl_xor_sync(0xffffffffu, m, offset_lanes);
      const float s2 = __shfl_xor_sync(0xffffffffu, s, offset_lanes);
      merge(m, s, m2, s2);
    }
    if (lane == 0) {
      warp_max[warp] = m;
      warp_sum[warp] = s;
    }
    __syncthreads();
    if (warp == 0) {
      m = lane < kWarps ? warp_max[lane] : -INFINITY;
      s = lane < kWarps ? warp_sum[lane] : 0.0f;
#pragma unroll
      for (int offset_lanes = 16; offset_lanes > 0; offset_lanes /= 2) {
        const float m2 = __shfl_xor_sync(0xffffffffu, m, offset_lanes);
        const float s2 = __shfl_xor_sync(0xffffffffu, s, offset_lanes);
        merge(m, s, m2, s2);
      }
      if (lane == 0) {
        row_max = m;
        row_sum = s;
      }
    }
    __syncthreads();
    const float mx = row_max;
    const float sum = row_sum;
    const float inv_sum = 1.0f / sum;

    // Pass 2: dlogits = (softmax - onehot) * scale; zeros in the padding columns.
    if constexpr (kVectors) {
      for (int i = tid * kVec; i < vec_end; i += kThreads * kVec) {
        float f[kVec];
        load_bf16x8(x + i, f);
#pragma unroll
        for (int k = 0; k < kVec; ++k) {
          const float p = expf(f[k] - mx) * inv_sum;
          f[k] = (p - (i + k == target ? 1.0f : 0.0f)) * dloss_scale;
        }
        store_bf16x8(dx + i, f);
      }
    }
    for (int i = vec_end + tid; i < Vp; i += kThreads) {
      float d = 0.0f;
      if (i < V) {
        const float p = expf(__bfloat162float(x[i]) - mx) * inv_sum;
        d = (p - (i == target ? 1.0f : 0.0f)) * dloss_scale;
      }
      dx[i] = __float2bfloat16_rn(d);
    }
    // (mx - target_logit) first: both are logits of the row, so a large common offset
    // cancels exactly instead of costing the loss its low bits.
    if (tid == 0) losses[row] = valid_target ? logf(sum) + (mx - target_logit) : __int_as_float(0x7fc00000);
    __syncthreads();  // the shared reduction slots are reused by the next row
  }
}

}  // namespace

void softmax_cross_entropy(float* losses, __nv_bfloat16* dlogits, const __nv_bfloat16* logits, const int* targets,
                           int rows, int V, int Vp, float dloss_scale, cudaStream_t stream) {
  constexpr const char* what = "softmax_cross_entropy";
  require(rows > 0, what, "rows must be positive, got " + std::to_string(rows));
  require(V > 0, what, "V must be positive, got " + std::to_string(V));
  require(Vp >= V, what, "Vp (" + std::to_string(Vp) + ") must be >= V (" + std::to_string(V) + ")");
  require(losses != nullptr, what, "losses is null");
  require(dlogits != nullptr, what, "dlogits is null");
  require(logits != nullptr, what, "logits is null");
  require(targets != nullptr, what, "targets is null");
  const int blocks = rows < kMaxBlocks ? rows : kMaxBlocks;
  if (Vp % kVec == 0 && aligned16(logits) && aligned16(dlogits))
    softmax_cross_entropy_kernel<true>
        <<<blocks, kThreads, 0, stream>>>(losses, dlogits, logits, targets, rows, V, Vp, dloss_scale);
  else
    softmax_cross_entropy_kernel<false>
        <<<blocks, kThreads, 0, stream>>>(losses, dlogits, logits, targets, rows, V, Vp, dloss_scale);
  TRAINSIM_CUDA_CHECK(cudaGetLastError());
}

}  // namespace trainsim::kernels
