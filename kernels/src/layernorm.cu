// LayerNorm over the last dimension, forward and backward (eps 1e-5, biased variance).
//
// Forward and the dinp part of backward: one warp per row; the row (C bf16, a few KiB) is
// re-read from L1 for each pass instead of being held in registers, so any C % 8 == 0 works.
// Mean and variance are two-pass (sum, then sum of squared deviations) for accuracy.
//
// dweight and dbias are column sums over all rows. To keep them deterministic without
// atomics, backward writes one partial sum per chunk of rows into the workspace (fixed row
// order within a chunk), then a second kernel adds the chunks in order into dweight/dbias.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
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

constexpr int kVec = 8;            // bf16 elements in one 16-byte vector
constexpr float kEps = 1e-5f;      // GPT-2's layernorm epsilon (torch.nn.LayerNorm default)
constexpr int kWarpsPerBlock = 8;  // rows per block of the row kernels
constexpr int kRowThreads = 32 * kWarpsPerBlock;
constexpr int kTileVecs = 32;      // vectors (of 8 channels) per column tile: 256 channels
constexpr int kTileRows = 8;       // threads along rows in a column tile block
constexpr int kMaxChunks = 256;    // row chunks of the dweight/dbias partial sums
constexpr int kMinChunkRows = 16;  // fewest rows per chunk

__device__ __forceinline__ float warp_sum(float x) {
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) x += __shfl_xor_sync(0xffffffffu, x, offset);
  return x;
}

__global__ void __launch_bounds__(kRowThreads) layernorm_forward_kernel(__nv_bfloat16* out,           // (rows, C)
                                                                        float* mean,                  // (rows)
                                                                        float* rstd,                  // (rows)
                                                                        const __nv_bfloat16* inp,     // (rows, C)
                                                                        const __nv_bfloat16* weight,  // (C)
                                                                        const __nv_bfloat16* bias,    // (C)
                                                                        int rows, int C) {
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const int row = static_cast<int>(blockIdx.x) * kWarpsPerBlock + static_cast<int>(threadIdx.x) / 32;
  if (row >= rows) return;  // whole warps leave; no block-wide synchronization below
  const int vecs = C / kVec;
  const __nv_bfloat16* x = inp + static_cast<std::size_t>(row) * C;

  float sum = 0.0f;
  for (int v = lane; v < vecs; v += 32) {
    float f[kVec];
    load_bf16x8(x + v * kVec, f);
#pragma unroll
    for (int k = 0; k < kVec; ++k) sum += f[k];
  }
  const float mu = warp_sum(sum) / static_cast<float>(C);

  float sq = 0.0f;
  for (int v = lane; v < vecs; v += 32) {
    float f[kVec];
    load_bf16x8(x + v * kVec, f);
#pragma unroll
    for (int k = 0; k < kVec; ++k) sq += (f[k] - mu) * (f[k] - mu);
  }
  const float s = rsqrtf(warp_sum(sq) / static_cast<float>(C) + kEps);

  __nv_bfloat16* o = out + static_cast<std::size_t>(row) * C;
  for (int v = lane; v < vecs; v += 32) {
    float f[kVec], w[kVec], b[kVec];
    load_bf16x8(x + v * kVec, f);
    load_bf16x8(weight + v * kVec, w);
    load_bf16x8(bias + v * kVec, b);
#pragma unroll
    for (int k = 0; k < kVec; ++k) f[k] = (f[k] - mu) * s * w[k] + b[k];
    store_bf16x8(o + v * kVec, f);
  }
  if (lane == 0) {
    mean[row] = mu;
    rstd[row] = s;
  }
}

// dinp = rstd * (dnorm - mean(dnorm) - xhat * mean(dnorm * xhat)), dnorm = dout * weight.
__global__ void __launch_bounds__(kRowThreads) layernorm_backward_dinp_kernel(__nv_bfloat16* dinp,          // (rows, C)
                                                                              const __nv_bfloat16* dout,    // (rows, C)
                                                                              const __nv_bfloat16* inp,     // (rows, C)
                                                                              const __nv_bfloat16* weight,  // (C)
                                                                              const float* mean,            // (rows)
                                                                              const float* rstd,            // (rows)
                                                                              int rows, int C) {
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const int row = static_cast<int>(blockIdx.x) * kWarpsPerBlock + static_cast<int>(threadIdx.x) / 32;
  if (row >= rows) return;
  const int vecs = C / kVec;
  const std::size_t offset = static_cast<std::size_t>(row) * C;
  const float mu = mean[row];
  const float s = rstd[row];

  float dnorm_sum = 0.0f;
  float dnorm_xhat_sum = 0.0f;
  for (int v = lane; v < vecs; v += 32) {
    float g[kVec], x[kVec], w[kVec];
    load_bf16x8(dout + offset + v * kVec, g);
    load_bf16x8(inp + offset + v * kVec, x);
    load_bf16x8(weight + v * kVec, w);
#pragma unroll
    for (int k = 0; k < kVec; ++k) {
      const float dnorm = g[k] * w[k];
      dnorm_sum += dnorm;
      dnorm_xhat_sum += dnorm * (x[k] - mu) * s;
    }
  }
  const float dnorm_mean = warp_sum(dnorm_sum) / static_cast<float>(C);
  const float dnorm_xhat_mean = warp_sum(dnorm_xhat_sum) / static_cast<float>(C);

  for (int v = lane; v < vecs; v += 32) {
    float g[kVec], x[kVec], w[kVec];
    load_bf16x8(dout + offset + v * kVec, g);
    load_bf16x8(inp + offset + v * kVec, x);
    load_bf16x8(weight + v * kVec, w);
#pragma unroll
    for (int k = 0; k < kVec; ++k) {
      const float xhat = (x[k] - mu) * s;
      g[k] = (g[k] * w[k] - dnorm_mean - xhat * dnorm_xhat_mean) * s;
    }
    store_bf16x8(dinp + offset + v * kVec, g);
  }
}

// Block (kTileVecs, kTileRows) covers 256 channels of one chunk of rows; thread (x, y) sums
// rows y, y + 8, ... of the chunk for its 8 channels, then the 8 row threads are added in
// order. partial_dw/partial_db: (chunks, C).
__global__ void __launch_bounds__(kTileVecs* kTileRows)
    layernorm_backward_partial_kernel(float* partial_dw,          // (chunks, C)
                                      float* partial_db,          // (chunks, C)
                                      const __nv_bfloat16* dout,  // (rows, C)
                                      const __nv_bfloat16* inp,   // (rows, C)
                                      const float* mean,          // (rows)
                                      const float* rstd,          // (rows)
                                      int rows, int C, int chunk_rows) {
  __shared__ float sh[2 * kVec][kTileRows][kTileVecs];  // [dw 0..7, db 0..7][y][x], conflict-free
  const int tx = static_cast<int>(threadIdx.x);
  const int ty = static_cast<int>(threadIdx.y);
  const int v = static_cast<int>(blockIdx.x) * kTileVecs + tx;
  const bool valid = v < C / kVec;
  const int chunk = static_cast<int>(blockIdx.y);
  const int first = chunk * chunk_rows;
  const int last = first + chunk_rows < rows ? first + chunk_rows : rows;

  float dw[kVec] = {};
  float db[kVec] = {};
  if (valid) {
    for (int r = first + ty; r < last; r += kTileRows) {
      const std::size_t offset = static_cast<std::size_t>(r) * C + static_cast<std::size_t>(v) * kVec;
      float g[kVec], x[kVec];
      load_bf16x8(dout + offset, g);
      load_bf16x8(inp + offset, x);
      const float mu = mean[r];
      const float s = rstd[r];
#pragma unroll
      for (int k = 0; k < kVec; ++k) {
        dw[k] += g[k] * ((x[k] - mu) * s);
        db[k] += g[k];
      }
    }
  }
#pragma unroll
  for (int k = 0; k < kVec; ++k) {
    sh[k][ty][tx] = dw[k];
    sh[kVec + k][ty][tx] = db[k];
  }
  __syncthreads();
  if (valid && ty < 2) {  // row thread 0 finishes dweight, row thread 1 dbias
    float total[kVec];
#pragma unroll
    for (int k = 0; k < kVec; ++k) {
      float acc = 0.0f;
#pragma unroll
      for (int y = 0; y < kTileRows; ++y) acc += sh[ty * kVec + k][y][tx];
      total[k] = acc;
    }
    float* dst =
        (ty == 0 ? partial_dw : partial_db) + static_cast<std::size_t>(chunk) * C + static_cast<std::size_t>(v) * kVec;
    reinterpret_cast<float4*>(dst)[0] = make_float4(total[0], total[1], total[2], total[3]);
    reinterpret_cast<float4*>(dst)[1] = make_float4(total[4], total[5], total[6], total[7]);
  }
}

// Block (32, 8) covers 32 channels; thread (x, y) adds chunks y, y + 8, ... in order, then
// row thread 0 adds the 8 sums in order into dweight and row thread 1 into dbias.
__global__ void __launch_bounds__(32 * 8) layernorm_backward_finish_kernel(float* dweight,           // (C)
                                                                           float* dbias,             // (C)
                                                                           const float* partial_dw,  // (chunks, C)
                                                                           const float* partial_db,  // (chunks, C)
                                                                           int chunks, int C) {
  __shared__ float sh[2][8][32];
  const int tx = static_cast<int>(threadIdx.x);
  const int ty = static_cast<int>(threadIdx.y);
  const int c = static_cast<int>(blockIdx.x) * 32 + tx;
  float dw = 0.0f;
  float db = 0.0f;
  if (c < C) {
    for (int chunk = ty; chunk < chunks; chunk += 8) {
      dw += partial_dw[static_cast<std::size_t>(chunk) * C + c];
      db += partial_db[static_cast<std::size_t>(chunk) * C + c];
    }
  }
  sh[0][ty][tx] = dw;
  sh[1][ty][tx] = db;
  __syncthreads();
  if (c < C && ty < 2) {
    float acc = 0.0f;
#pragma unroll
    for (int y = 0; y < 8; ++y) acc += sh[ty][y][tx];
    float* dst = ty == 0 ? dweight : dbias;
    dst[c] += acc;
  }
}

void check_shape(const char* what, int rows, int cols) {
  require(rows > 0, what, "rows must be positive, got " + std::to_string(rows));
  require(cols > 0, what, "cols must be positive, got " + std::to_string(cols));
  require(cols % kVec == 0, what, "cols must be a multiple of 8 (16-byte bf16 vectors), got " + std::to_string(cols));
}

// Row chunks of the partial sums: enough blocks to fill the GPU for GPT-2 sizes (8192 rows
// -> 256 chunks of 32 rows), a function of rows alone so the workspace size is known.
int chunk_count(int rows) { return std::clamp((rows + kMinChunkRows - 1) / kMinChunkRows, 1, kMaxChunks); }

int row_blocks(int rows) { return (rows + kWarpsPerBlock - 1) / kWarpsPerBlock; }

}  // namespace

void layernorm_forward(__nv_bfloat16* out, float* mean, float* rstd, const __nv_bfloat16* inp,
                       const __nv_bfloat16* weight, const __nv_bfloat16* bias, int rows, int cols,
                       cudaStream_t stream) {
  constexpr const char* what = "layernorm_forward";
  check_shape(what, rows, cols);
  require(out != nullptr, what, "out is null");
  require(mean != nullptr, what, "mean is null");
  require(rstd != nullptr, what, "rstd is null");
  require(inp != nullptr, what, "inp is null");
  require(weight != nullptr, what, "weight is null");
  require(bias != nullptr, what, "bias is null");
  require(aligned16(out) && aligned16(inp) && aligned16(weight) && aligned16(bias), what,
          "out, inp, weight and bias must be 16-byte aligned");
  layernorm_forward_kernel<<<row_blocks(rows), kRowThreads, 0, stream>>>(out, mean, rstd, inp, weight, bias, rows,
                                                                         cols);
  TRAINSIM_CUDA_CHECK(cudaGetLastError());
}

std::size_t layernorm_backward_workspace_bytes(int rows, int cols) {
  check_shape("layernorm_backward_workspace_bytes", rows, cols);
  return 2 * static_cast<std::size_t>(chunk_count(rows)) * static_cast<std::size_t>(cols) * sizeof(float);
}

void layernorm_backward(__nv_bfloat16* dinp, float* dweight, float* dbias, const __nv_bfloat16* dout,
                        const __nv_bfloat16* inp, const __nv_bfloat16* weight, const float* mean, const float* rstd,
                        void* workspace, std::size_t workspace_bytes, int rows, int cols, cudaStream_t stream) {
  constexpr const char* what = "layernorm_backward";
  check_shape(what, rows, cols);
  require(dinp != nullptr, what, "dinp is null");
  require(dweight != nullptr, what, "dweight is null");
  require(dbias != nullptr, what, "dbias is null");
  require(dout != nullptr, what, "dout is null");
  require(inp != nullptr, what, "inp is null");
  require(weight != nullptr, what, "weight is null");
  require(mean != nullptr, what, "mean is null");
  require(rstd != nullptr, what, "rstd is null");
  require(workspace != nullptr, what, "workspace is null");
  require(aligned16(dinp) && aligned16(dout) && aligned16(inp) && aligned16(weight) && aligned16(workspace), what,
          "dinp, dout, inp, weight and workspace must be 16-byte aligned");
  const std::size_t needed = layernorm_backward_workspace_bytes(rows, cols);
  require(workspace_bytes >= needed, what,
          "workspace has " + std::to_string(workspace_bytes) + " bytes, needs " + std::to_string(needed) +
              " (layernorm_backward_workspace_bytes)");
  const int chunks = chunk_count(rows);
  const int chunk_rows = (rows + chunks - 1) / chunks;
  float* partial_dw = static_cast<float*>(workspace);
  float* partial_db = partial_dw + static_cast<std::size_t>(chunks) * cols;

  layernorm_backward_dinp_kernel<<<row_blocks(rows), kRowThreads, 0, stream>>>(dinp, dout, inp, weight, mean, rstd,
                                                                               rows, cols);
  TRAINSIM_CUDA_CHECK(cudaGetLastError());
  const dim3 tile_grid(static_cast<unsigned>((cols / kVec + kTileVecs - 1) / kTileVecs), static_cast<unsigned>(chunks));
  layernorm_backward_partial_kernel<<<tile_grid, dim3(kTileVecs, kTileRows), 0, stream>>>(
      partial_dw, partial_db, dout, inp, mean, rstd, rows, cols, chunk_rows);
  TRAINSIM_CUDA_CHECK(cudaGetLastError());
  layernorm_backward_finish_kernel<<<static_cast<unsigned>((cols + 31) / 32), dim3(32, 8), 0, stream>>>(
      dweight, dbias, partial_dw, partial_db, chunks, cols);
  TRAINSIM_CUDA_CHECK(cudaGetLastError());
}

}  // namespace trainsim::kernels
