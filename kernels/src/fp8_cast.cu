// FP8 casts with per-tensor scaling and amax (trainsim/kernels/fp8.h).
// fp8_cast: grid-stride over 8-element vectors (16 bytes of bf16 in, 8 bytes of fp8 out)
// when both pointers allow, element by element otherwise. fp8_cast_transpose: where rows
// and cols are multiples of 8 and the pointers allow, 64 x 64 tiles read as 16-byte
// vectors of eight bf16 and written as 8-byte vectors of eight fp8, rows straight and
// columns gathered from the tile in shared memory; otherwise 32 x 32 tiles element by
// element, both outputs still written in whole 32-byte segments. amax: a warp-shuffle and block max, then
// one atomicMax per block on the float's bits (non-negative floats order as their bits).
#include <cuda_bf16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "bf16x8.cuh"
#include "launch_checks.h"
#include "trainsim/kernels/cuda_check.h"
#include "trainsim/kernels/fp8.h"

namespace trainsim::kernels {
namespace {

using launch::require;
using launch::aligned;

constexpr int kVec = 8;
constexpr int kThreads = 256;
constexpr std::size_t kMaxBlocks = 4096;
constexpr int kTile = 32;
constexpr int kTileRows = 8;  // threads per tile column: each handles kTile / kTileRows rows

template <__nv_fp8_interpretation_t kFormat>
__device__ __forceinline__ unsigned char to_fp8(float x) {
  return static_cast<unsigned char>(__nv_cvt_float_to_fp8(x, __NV_SATFINITE, kFormat));
}

// |x| folded into a running max; NaN is skipped (fmaxf returns the other operand).
__device__ __forceinline__ float fold_amax(float m, float x) { return fmaxf(m, fabsf(x)); }

// The block's max of every thread's `m`, added to *amax by the first thread.
__device__ void block_amax(float m, float* amax) {
  __shared__ float warp_max[32];
  for (int o = 16; o > 0; o >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
  const int threads = static_cast<int>(blockDim.x * blockDim.y);
  const int t = static_cast<int>(threadIdx.y * blockDim.x + threadIdx.x);
  if (t % 32 == 0) warp_max[t / 32] = m;
  __syncthreads();
  if (t == 0) {
    float b = 0.0F;
    for (int w = 0; w < (threads + 31) / 32; ++w) b = fmaxf(b, warp_max[w]);
    atomicMax(reinterpret_cast<int*>(amax), __float_as_int(b));
  }
}

template <__nv_fp8_interpretation_t kFormat, bool kVectors>
__global__ void __launch_bounds__(kThreads) fp8_cast_kernel(unsigned char* out, float* amax,
                                                            const __nv_bfloat16* in, const float* scale_p,
                                                            std::size_t n) {
  const float scale = *scale_p;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  const std::size_t tid = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  float m = 0.0F;
  std::size_t scalar_begin = 0;
  if constexpr (kVectors) {
    const std::size_t vecs = n / kVec;
    for (std::size_t i = tid; i < vecs; i += stride) {
      float x[kVec];
      load_bf16x8(in + i * kVec, x);
      unsigned w[2] = {0u, 0u};
#pragma unroll
      for (int k = 0; k < kVec; ++k) {
        m = fold_amax(m, x[k]);
        w[k / 4] |= static_cast<unsigned>(to_fp8<kFormat>(x[k] * scale)) << (8 * (k % 4));
      }
      *reinterpret_cast<uint2*>(out + i * kVec) = uint2{w[0], w[1]};
    }
    scalar_begin = vecs * kVec;
  }
  for (std::size_t i = scalar_begin + tid; i < n; i += stride) {
    const float x = __bfloat162float(in[i]);
    m = fold_amax(m, x);
    out[i] = to_fp8<kFormat>(x * scale);
  }
  block_amax(m, amax);
}

template <__nv_fp8_interpretation_t kFormat>
__global__ void __launch_bounds__(kTile* kTileRows) fp8_cast_transpose_kernel(unsigned char* out,
                                                                             unsigned char* out_t, float* amax,
                                                                             const __nv_bfloat16* in,
                                                                             const float* scale_p, int rows,
                                                                             int cols) {
  __shared__ unsigned char tile[kTile][kTile + 4];
  const float scale = *scale_p;
  const int c0 = static_cast<int>(blockIdx.x) * kTile, r0 = static_cast<int>(blockIdx.y) * kTile;
  const int tx = static_cast<int>(threadIdx.x), ty = static_cast<int>(threadIdx.y);
  float m = 0.0F;
  for (int dr = ty; dr < kTile; dr += kTileRows) {
    const int r = r0 + dr, c = c0 + tx;
    if (r < rows && c < cols) {
      const std::size_t i = static_cast<std::size_t>(r) * static_cast<std::size_t>(cols) + static_cast<std::size_t>(c);
      const float x = __bfloat162float(in[i]);
      m = fold_amax(m, x);
      const unsigned char b = to_fp8<kFormat>(x * scale);
      out[i] = b;
      tile[dr][tx] = b;
    }
  }
  __syncthreads();
  for (int dc = ty; dc < kTile; dc += kTileRows) {
    const int c = c0 + dc, r = r0 + tx;
    if (r < rows && c < cols)
      out_t[static_cast<std::size_t>(c) * static_cast<std::size_t>(rows) + static_cast<std::size_t>(r)] = tile[tx][dc];
  }
  block_amax(m, amax);
}

// 64 x 64 tiles, 256 threads: each thread converts two 8-element row vectors and
// writes two 8-byte column vectors. The tile's row pitch of 68 bytes keeps the 4-byte
// stores aligned and spreads a column's bytes over the banks (2-way at most).
constexpr int kVecTile = 64;
constexpr int kVecPitch = kVecTile + 4;
constexpr int kVecThreads = 256;

template <__nv_fp8_interpretation_t kFormat>
__global__ void __launch_bounds__(kVecThreads) fp8_cast_transpose_vec_kernel(unsigned char* out,
                                                                            unsigned char* out_t, float* amax,
                                                                            const __nv_bfloat16* in,
                                                                            const float* scale_p, int rows,
                                                                            int cols) {
  __shared__ __align__(16) unsigned char tile[kVecTile][kVecPitch];
  const float scale = *scale_p;
  const int c0 = static_cast<int>(blockIdx.x) * kVecTile, r0 = static_cast<int>(blockIdx.y) * kVecTile;
  const int t = static_cast<int>(threadIdx.x);
  constexpr int kVectorsPerRow = kVecTile / kVec;
  float m = 0.0F;
#pragma unroll
  for (int it = 0; it < kVecTile * kVectorsPerRow / kVecThreads; ++it) {
    const int v = t + it * kVecThreads;
    const int dr = v / kVectorsPerRow, dc = (v % kVectorsPerRow) * kVec;
    const int r = r0 + dr, c = c0 + dc;
    if (r < rows && c < cols) {  // cols is a multiple of 8: the whole vector is inside
      const std::size_t i = static_cast<std::size_t>(r) * static_cast<std::size_t>(cols) + static_cast<std::size_t>(c);
      float x[kVec];
      load_bf16x8(in + i, x);
      unsigned w[2] = {0U, 0U};
#pragma unroll
      for (int j = 0; j < kVec; ++j) {
        m = fold_amax(m, x[j]);
        w[j / 4] |= static_cast<unsigned>(to_fp8<kFormat>(x[j] * scale)) << (8 * (j % 4));
      }
      *reinterpret_cast<uint2*>(out + i) = make_uint2(w[0], w[1]);
      *reinterpret_cast<unsigned*>(&tile[dr][dc]) = w[0];
      *reinterpret_cast<unsigned*>(&tile[dr][dc + 4]) = w[1];
    }
  }
  __syncthreads();
#pragma unroll
  for (int it = 0; it < kVecTile * kVectorsPerRow / kVecThreads; ++it) {
    const int v = t + it * kVecThreads;
    const int dc = v / kVectorsPerRow, dr = (v % kVectorsPerRow) * kVec;
    const int c = c0 + dc, r = r0 + dr;
    if (r < rows && c < cols) {  // rows is a multiple of 8: the whole column vector is inside
      unsigned w[2] = {0U, 0U};
#pragma unroll
      for (int j = 0; j < kVec; ++j) w[j / 4] |= static_cast<unsigned>(tile[dr + j][dc]) << (8 * (j % 4));
      *reinterpret_cast<uint2*>(out_t + static_cast<std::size_t>(c) * static_cast<std::size_t>(rows) +
                                static_cast<std::size_t>(r)) = make_uint2(w[0], w[1]);
    }
  }
  block_amax(m, amax);
}

unsigned flat_blocks(std::size_t work) { return launch::flat_blocks(work, kThreads, kMaxBlocks); }

template <__nv_fp8_interpretation_t kFormat>
void launch_cast(unsigned char* out, float* amax, const __nv_bfloat16* in, const float* scale, std::size_t n,
                 cudaStream_t stream) {
  if (aligned(in, 16) && aligned(out, 8))
    fp8_cast_kernel<kFormat, true><<<flat_blocks(n / kVec), kThreads, 0, stream>>>(out, amax, in, scale, n);
  else
    fp8_cast_kernel<kFormat, false><<<flat_blocks(n), kThreads, 0, stream>>>(out, amax, in, scale, n);
}

}  // namespace

void fp8_cast(void* out, float* amax, const __nv_bfloat16* in, const float* scale, std::size_t n, Fp8Format format,
              cudaStream_t stream) {
  constexpr const char* what = "fp8_cast";
  require(n > 0, what, "n must be positive, got 0");
  require(out != nullptr, what, "out is null");
  require(amax != nullptr, what, "amax is null");
  require(in != nullptr, what, "in is null");
  require(scale != nullptr, what, "scale is null");
  auto* o = static_cast<unsigned char*>(out);
  if (format == Fp8Format::kE4M3) launch_cast<__NV_E4M3>(o, amax, in, scale, n, stream);
  else launch_cast<__NV_E5M2>(o, amax, in, scale, n, stream);
  TRAINSIM_CUDA_CHECK(cudaGetLastError());
}

void fp8_cast_transpose(void* out, void* out_t, float* amax, const __nv_bfloat16* in, const float* scale, int rows,
                        int cols, Fp8Format format, cudaStream_t stream) {
  constexpr const char* what = "fp8_cast_transpose";
  require(rows > 0 && cols > 0, what,
          "rows and cols must be positive, got " + std::to_string(rows) + " x " + std::to_string(cols));
  require(out != nullptr && out_t != nullptr, what, "an output is null");
  require(amax != nullptr, what, "amax is null");
  require(in != nullptr, what, "in is null");
  require(scale != nullptr, what, "scale is null");
  auto* o = static_cast<unsigned char*>(out);
  auto* ot = static_cast<unsigned char*>(out_t);
  if (rows % kVec == 0 && cols % kVec == 0 && aligned(in, 16) && aligned(o, 8) && aligned(ot, 8)) {
    const dim3 grid(static_cast<unsigned>((cols + kVecTile - 1) / kVecTile),
                    static_cast<unsigned>((rows + kVecTile - 1) / kVecTile));
    if (format == Fp8Format::kE4M3)
      fp8_cast_transpose_vec_kernel<__NV_E4M3><<<grid, kVecThreads, 0, stream>>>(o, ot, amax, in, scale, rows, cols);
    else
      fp8_cast_transpose_vec_kernel<__NV_E5M2><<<grid, kVecThreads, 0, stream>>>(o, ot, amax, in, scale, rows, cols);
    TRAINSIM_CUDA_CHECK(cudaGetLastError());
    return;
  }
  const dim3 block(kTile, kTileRows);
  const dim3 grid(static_cast<unsigned>((cols + kTile - 1) / kTile), static_cast<unsigned>((rows + kTile - 1) / kTile));
  if (format == Fp8Format::kE4M3)
    fp8_cast_transpose_kernel<__NV_E4M3><<<grid, block, 0, stream>>>(o, ot, amax, in, scale, rows, cols);
  else
    fp8_cast_transpose_kernel<__NV_E5M2><<<grid, block, 0, stream>>>(o, ot, amax, in, scale, rows, cols);
  TRAINSIM_CUDA_CHECK(cudaGetLastError());
}

}  // namespace trainsim::kernels
