// Causal attention backward, FlashAttention-2 style (Dao 2023, algorithm 2): one
// block per 64-key tile walks the query tiles from its own to the last (earlier
// ones are fully masked), recomputing P = exp(q k^T / sqrt(D) - lse) instead of
// storing it. dK and dV stay in registers; dQ collects every key tile's share in
// an fp32 buffer through atomics and is converted to bf16 at the end.
//   1. preprocess: delta = rowsum(dout * o); zero the dQ accumulator
//   2. main:       dV += P^T dO;  dP = dO V^T;  dS = P (dP - delta);
//                  dK += dS^T Q / sqrt(D);  dQ += dS K / sqrt(D)
//   3. convert:    dq = bf16(dQ accumulator)
// Matmuls run on bf16 tensor cores through mma.sync m16n8k16 fed by ldmatrix (sm_80+).
// Contract: trainsim/kernels/attention.h; reference: kernels/reference/attention_ref.h.
// Q, dO, lse and delta are double-buffered (the next query tile loads during the whole
// current one); dQ goes out as float2 reductions (red.global.add.v2.f32, sm_90).
// sm_90, nvcc 13.0 -Xptxas -v, main kernel: D=128 254 registers, 114,688 B shared
// (2 blocks/SM); D=64 168 registers (launch bound: 3 blocks/SM), 65,536 B (3 blocks/SM);
// no spills.
#include <cuda_bf16.h>
#include <cuda_pipeline_primitives.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>

#include "trainsim/kernels/attention.h"
#include "trainsim/kernels/cuda_check.h"
#include "attention_tiles.cuh"
#include "bf16x8.cuh"

namespace trainsim::kernels {
namespace {

using bf16 = __nv_bfloat16;
using attention_detail::ldmatrix_x4;
using attention_detail::ldmatrix_x4_trans;
using attention_detail::mma_bf16_16816;

constexpr int kTile = 64;  // Bc = Br: keys and query rows per tile
constexpr int kWarps = 4;  // warp w owns keys 16w..16w+15 of the tile (and, for dQ, those query rows)
constexpr int kThreads = kWarps * 32;
constexpr int kFrag = 16;              // wmma m = n = k
constexpr int kPad = 8;                // bf16 row padding: rows 16 bytes apart mod 128 avoid bank conflicts
constexpr int kProbLd = kTile + kPad;  // bf16 P^T / dS^T tile row stride
constexpr float kLog2e = 1.442695040888963407f;
constexpr std::size_t kWorkspaceAlign = 256;

// Dynamic shared memory of one block, in bytes from the start; every offset is a
// multiple of 128 (wmma needs 32-byte aligned fragment pointers, cp.async 16).
template <int D>
struct BackwardSmem {
  static constexpr int kLd = D + kPad;  // bf16 row stride of the K, V, Q, dO tiles
  static constexpr std::size_t kTileBytes = std::size_t{kTile} * kLd * sizeof(bf16);
  static constexpr std::size_t kK = 0;
  static constexpr std::size_t kV = kK + kTileBytes;
  // Query-side tiles are double-buffered: buffer b of Q at kQ + b * kTileBytes, etc.
  static constexpr std::size_t kQ = kV + kTileBytes;
  static constexpr std::size_t kDO = kQ + 2 * kTileBytes;
  static constexpr std::size_t kDS = kDO + 2 * kTileBytes;  // (64 keys, 64 queries) bf16: dS^T
  static constexpr std::size_t kLse = kDS + std::size_t{kTile} * kProbLd * sizeof(bf16);  // 2 x (64,) lse log2(e)
  static constexpr std::size_t kDelta = kLse + 2 * kTile * sizeof(float);                 // 2 x (64,)
  static constexpr std::size_t kBytes = kDelta + 2 * kTile * sizeof(float);
  static_assert(kDS % 128 == 0 && kLse % 128 == 0 && kTileBytes % 128 == 0);
  // D = 64: 65,536 B (3 blocks/SM); D = 128: 114,688 B, and 2 x (114,688 + 1,024
  // reserved) = 231,424 B fits the 233,472 B of shared memory per SM (2 blocks/SM).
  static_assert(D != 128 || 2 * (kBytes + 1024) <= 233472);
};

// Blocks per SM the register budget is sized for: D = 64 fits 3 (<= 168 registers).
template <int D>
constexpr int kMinBlocks = D == 64 ? 3 : 1;

// Rows [row0, row0 + 64) of one (T, D) slice into a padded tile with cp.async. Rows
// at or past T are zeroed: masked probabilities are 0, and 0 * (stale NaN) is NaN.
template <int D>
__device__ void load_tile_async(bf16* tile, const bf16* slice, int row0, int seq) {
  constexpr int kChunks = D / 8;  // 16-byte chunks per row
  for (int c = static_cast<int>(threadIdx.x); c < kTile * kChunks; c += kThreads) {
    const int r = c / kChunks;
    const int col = (c % kChunks) * 8;
    bf16* dst = tile + r * BackwardSmem<D>::kLd + col;
    if (row0 + r < seq)
      __pipeline_memcpy_async(dst, slice + static_cast<std::size_t>(row0 + r) * D + col, 16);
    else
      *reinterpret_cast<uint4*>(dst) = make_uint4(0, 0, 0, 0);
  }
}

// lse (in base 2) and delta of query rows row0..row0+63; rows past T get 0 (never used).
__device__ void load_row_stats(float* lse_log2, float* delta_tile, const float* lse, const float* delta, int row0,
                               int seq) {
  const int t = static_cast<int>(threadIdx.x);
  if (t < kTile)
    lse_log2[t] = row0 + t < seq ? lse[row0 + t] * kLog2e : 0.0f;
  else if (t < 2 * kTile)
    delta_tile[t - kTile] = row0 + t - kTile < seq ? delta[row0 + t - kTile] : 0.0f;
}

// One warp per row: delta = sum_d dout * o in fp32, and the row's dQ accumulator zeroed.
template <int D>
__global__ void __launch_bounds__(kThreads)
    attention_backward_preprocess_kernel(const bf16* o, const bf16* dout, float* delta, float* dq_accum,
                                         std::size_t rows) {
  const int lane = static_cast<int>(threadIdx.x % 32);
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * kWarps;
  for (std::size_t row = static_cast<std::size_t>(blockIdx.x) * kWarps + threadIdx.x / 32; row < rows; row += stride) {
    float sum = 0.0f;
#pragma unroll
    for (int e = 0; e < D / 32; ++e) {
      const std::size_t i = row * D + static_cast<std::size_t>(e * 32 + lane);
      sum += __bfloat162float(o[i]) * __bfloat162float(dout[i]);
      dq_accum[i] = 0.0f;
    }
#pragma unroll
    for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, offset);
    if (lane == 0) delta[row] = sum;
  }
}

// grid (B*H, ceil(T/64)), 128 threads. scale_log2 = log2(e) / sqrt(D) turns q.k into
// base-2 scores; scale = 1 / sqrt(D) is folded into dS before it is rounded to bf16.
// Warp w owns keys 16w..16w+15 of the tile: S^T, dP^T, P^T and dS^T (16 keys x 64
// queries) and its dK, dV rows live in mma.sync accumulator registers; only dS^T is
// shared (through ds_tile) for dQ, where warp w owns query rows 16w..16w+15.
template <int D>
__global__ void __launch_bounds__(kThreads, kMinBlocks<D>)
    attention_backward_kernel(const bf16* q, const bf16* k, const bf16* v, const bf16* dout, const float* lse,
                              const float* delta, float* dq_accum, bf16* dk, bf16* dv, int seq, float scale_log2,
                              float scale) {
  using Smem = BackwardSmem<D>;
  constexpr int kLd = Smem::kLd;
  constexpr int kDSlices = D / 16;    // k16 slices of D
  constexpr int kDTiles = D / 8;      // n8 tiles of D
  constexpr int kQTiles = kTile / 8;  // n8 tiles of the query tile

  extern __shared__ __align__(128) unsigned char smem[];
  bf16* k_tile = reinterpret_cast<bf16*>(smem + Smem::kK);    // (64 keys, D)
  bf16* v_tile = reinterpret_cast<bf16*>(smem + Smem::kV);    // (64 keys, D)
  bf16* ds_tile = reinterpret_cast<bf16*>(smem + Smem::kDS);  // (64 keys, 64 queries)
  // Buffer b of the query-side tiles: (64 queries, D) Q and dO, (64,) lse and delta.
  auto q_buf = [&](int b) { return reinterpret_cast<bf16*>(smem + Smem::kQ + b * Smem::kTileBytes); };
  auto do_buf = [&](int b) { return reinterpret_cast<bf16*>(smem + Smem::kDO + b * Smem::kTileBytes); };
  auto lse_buf = [&](int b) { return reinterpret_cast<float*>(smem + Smem::kLse) + b * kTile; };
  auto delta_buf = [&](int b) { return reinterpret_cast<float*>(smem + Smem::kDelta) + b * kTile; };
  const int warp = static_cast<int>(threadIdx.x) / 32;
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const int g = lane >> 2;  // mma groupID: accumulator rows g and g + 8
  const int t = lane & 3;   // mma threadID_in_group: accumulator columns 2t, 2t + 1
  bf16* ds_rows = ds_tile + warp * kFrag * kProbLd;  // this warp's 16 key rows of ds_tile

  // Key tile 0 is seen by every query tile: the heaviest blocks start first.
  const int k_tile_index = static_cast<int>(blockIdx.y);
  const int num_tiles = static_cast<int>(gridDim.y);
  const int key0 = k_tile_index * kTile;
  const std::size_t slice = static_cast<std::size_t>(blockIdx.x) * static_cast<std::size_t>(seq);
  q += slice * D;
  k += slice * D;
  v += slice * D;
  dout += slice * D;
  dq_accum += slice * D;
  dk += slice * D;
  dv += slice * D;
  lse += slice;
  delta += slice;

  load_tile_async<D>(k_tile, k, key0, seq);
  load_tile_async<D>(v_tile, v, key0, seq);
  load_tile_async<D>(q_buf(0), q, key0, seq);
  load_tile_async<D>(do_buf(0), dout, key0, seq);
  __pipeline_commit();
  load_row_stats(lse_buf(0), delta_buf(0), lse, delta, key0, seq);

  float dk_acc[kDTiles][4];  // (16 keys, D) of this warp
  float dv_acc[kDTiles][4];  // (16 keys, D) of this warp
#pragma unroll
  for (int f = 0; f < kDTiles; ++f)
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      dk_acc[f][e] = 0.0f;
      dv_acc[f][e] = 0.0f;
    }
  const int key_of[2] = {key0 + warp * kFrag + g, key0 + warp * kFrag + g + 8};

  // Pipeline: Q, dO, lse, delta of tile i+1 load into the other buffer while tile i
  // is computed.
  for (int qt = k_tile_index; qt < num_tiles; ++qt) {
    const int query0 = qt * kTile;
    const int buf = (qt - k_tile_index) & 1;
    const bf16* q_tile = q_buf(buf);
    const bf16* do_tile = do_buf(buf);
    const float* lse_log2 = lse_buf(buf);
    const float* delta_tile = delta_buf(buf);
    __pipeline_wait_prior(0);
    // This tile's Q, dO, lse, delta are in; every warp is done with the last ds_tile
    // and with the other buffer (last used by tile qt - 1 before its second barrier).
    __syncthreads();
    if (qt + 1 < num_tiles) {
      load_tile_async<D>(q_buf(buf ^ 1), q, query0 + kTile, seq);
      load_tile_async<D>(do_buf(buf ^ 1), dout, query0 + kTile, seq);
      __pipeline_commit();
      load_row_stats(lse_buf(buf ^ 1), delta_buf(buf ^ 1), lse, delta, query0 + kTile, seq);
    }

    // S^T = K Q^T and dP^T = V dO^T (16 keys x 64 queries each).
    float s[kQTiles][4];
    float dp[kQTiles][4];
#pragma unroll
    for (int n = 0; n < kQTiles; ++n)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        s[n][e] = 0.0f;
        dp[n][e] = 0.0f;
      }
#pragma unroll(D == 64 ? 2 : 1)  // further unrolled, D = 64 spills at 168 registers and D = 128 at 255
    for (int f = 0; f < kDSlices; ++f) {
      std::uint32_t ka[4];
      std::uint32_t va[4];
      ldmatrix_x4(ka, k_tile + (warp * kFrag + (lane & 15)) * kLd + f * 16 + (lane >> 4) * 8);
      ldmatrix_x4(va, v_tile + (warp * kFrag + (lane & 15)) * kLd + f * 16 + (lane >> 4) * 8);
#pragma unroll
      for (int np = 0; np < kQTiles / 2; ++np) {
        // Q^T and dO^T as col-major B: element (d, query) at tile[query * kLd + d].
        const int offset = (np * 16 + (lane & 7) + ((lane >> 4) << 3)) * kLd + f * 16 + ((lane >> 3) & 1) * 8;
        std::uint32_t qb[4];
        ldmatrix_x4(qb, q_tile + offset);
        mma_bf16_16816(s[2 * np], ka, qb[0], qb[1]);
        mma_bf16_16816(s[2 * np + 1], ka, qb[2], qb[3]);
        std::uint32_t ob[4];
        ldmatrix_x4(ob, do_tile + offset);
        mma_bf16_16816(dp[2 * np], va, ob[0], ob[1]);
        mma_bf16_16816(dp[2 * np + 1], va, ob[2], ob[3]);
      }
    }

    // P^T = exp2(S^T scale_log2 - lse log2 e) where query >= key and query < T, else 0;
    // dS^T = P^T (dP^T - delta) / sqrt(D).
#pragma unroll
    for (int n = 0; n < kQTiles; ++n)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int c = n * 8 + 2 * t + (e & 1);
        const int query = query0 + c;
        const float p = (query >= key_of[e >> 1] && query < seq) ? exp2f(s[n][e] * scale_log2 - lse_log2[c]) : 0.0f;
        s[n][e] = p;
        dp[n][e] = p * (dp[n][e] - delta_tile[c]) * scale;
      }
    // As A fragments of four k16 query slices (accumulators of n8 tiles 2j, 2j+1),
    // and dS^T in bf16 to ds_tile for dQ.
    std::uint32_t p_frag[kTile / 16][4];
    std::uint32_t ds_frag[kTile / 16][4];
#pragma unroll
    for (int j = 0; j < kTile / 16; ++j) {
      p_frag[j][0] = pack_bf16x2(s[2 * j][0], s[2 * j][1]);
      p_frag[j][1] = pack_bf16x2(s[2 * j][2], s[2 * j][3]);
      p_frag[j][2] = pack_bf16x2(s[2 * j + 1][0], s[2 * j + 1][1]);
      p_frag[j][3] = pack_bf16x2(s[2 * j + 1][2], s[2 * j + 1][3]);
      ds_frag[j][0] = pack_bf16x2(dp[2 * j][0], dp[2 * j][1]);
      ds_frag[j][1] = pack_bf16x2(dp[2 * j][2], dp[2 * j][3]);
      ds_frag[j][2] = pack_bf16x2(dp[2 * j + 1][0], dp[2 * j + 1][1]);
      ds_frag[j][3] = pack_bf16x2(dp[2 * j + 1][2], dp[2 * j + 1][3]);
    }
#pragma unroll
    for (int j = 0; j < kTile / 16; ++j) {
      *reinterpret_cast<std::uint32_t*>(ds_rows + g * kProbLd + j * 16 + 2 * t) = ds_frag[j][0];
      *reinterpret_cast<std::uint32_t*>(ds_rows + (g + 8) * kProbLd + j * 16 + 2 * t) = ds_frag[j][1];
      *reinterpret_cast<std::uint32_t*>(ds_rows + g * kProbLd + j * 16 + 8 + 2 * t) = ds_frag[j][2];
      *reinterpret_cast<std::uint32_t*>(ds_rows + (g + 8) * kProbLd + j * 16 + 8 + 2 * t) = ds_frag[j][3];
    }

    // dV += P^T dO; dK += dS^T Q (the 1/sqrt(D) is already in dS). dO and Q as
    // B operands (k = query, n = d), transposed by ldmatrix.
#pragma unroll
    for (int j = 0; j < kTile / 16; ++j) {
#pragma unroll
      for (int dp2 = 0; dp2 < kDTiles / 2; ++dp2) {
        const int offset = (j * 16 + (lane & 15)) * kLd + dp2 * 16 + (lane >> 4) * 8;
        std::uint32_t ob[4];
        ldmatrix_x4_trans(ob, do_tile + offset);
        mma_bf16_16816(dv_acc[2 * dp2], p_frag[j], ob[0], ob[1]);
        mma_bf16_16816(dv_acc[2 * dp2 + 1], p_frag[j], ob[2], ob[3]);
        std::uint32_t qb[4];
        ldmatrix_x4_trans(qb, q_tile + offset);
        mma_bf16_16816(dk_acc[2 * dp2], ds_frag[j], qb[0], qb[1]);
        mma_bf16_16816(dk_acc[2 * dp2 + 1], ds_frag[j], qb[2], qb[3]);
      }
    }
    __syncthreads();  // all of ds_tile is written; every warp is done with this buffer

    // dQ += dS K for query rows 16w..16w+15 of the tile, added to the fp32
    // accumulator with atomics (other key tiles add to the same rows).
    const int dq_row0 = query0 + warp * kFrag;
    if (dq_row0 < seq) {
      float acc[kDTiles][4];
#pragma unroll
      for (int f = 0; f < kDTiles; ++f)
#pragma unroll
        for (int e = 0; e < 4; ++e) acc[f][e] = 0.0f;
#pragma unroll
      for (int kk = 0; kk < kTile / 16; ++kk) {
        // dS as the A operand: element (query, key) at ds_tile[key * kProbLd + query],
        // transposed by ldmatrix. Matrices: keys 16kk + {0, 0, 8, 8} x queries 16w + {0, 8, 0, 8}.
        std::uint32_t dsa[4];
        ldmatrix_x4_trans(dsa, ds_tile + (kk * 16 + (lane & 7) + ((lane >> 4) << 3)) * kProbLd + warp * kFrag +
                                   ((lane >> 3) & 1) * 8);
#pragma unroll
        for (int dp2 = 0; dp2 < kDTiles / 2; ++dp2) {
          // K as the B operand (k = key, n = d), transposed by ldmatrix.
          std::uint32_t kb[4];
          ldmatrix_x4_trans(kb, k_tile + (kk * 16 + (lane & 15)) * kLd + dp2 * 16 + (lane >> 4) * 8);
          mma_bf16_16816(acc[2 * dp2], dsa, kb[0], kb[1]);
          mma_bf16_16816(acc[2 * dp2 + 1], dsa, kb[2], kb[3]);
        }
      }
#pragma unroll
      for (int i = 0; i < 2; ++i) {
        const int row = dq_row0 + g + 8 * i;
        if (row >= seq) continue;
        float* dst = dq_accum + static_cast<std::size_t>(row) * D + 2 * t;  // 8-byte aligned
#pragma unroll
        for (int f = 0; f < kDTiles; ++f) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
          atomicAdd(dst + f * 8, acc[f][2 * i]);
          atomicAdd(dst + f * 8 + 1, acc[f][2 * i + 1]);
#else
          // sm_90: one vector reduction (red.global.add.v2.f32) per pair of columns.
          atomicAdd(reinterpret_cast<float2*>(dst + f * 8), make_float2(acc[f][2 * i], acc[f][2 * i + 1]));
#endif
        }
      }
    }
  }

  // dK and dV of this warp's 16 keys.
#pragma unroll
  for (int i = 0; i < 2; ++i) {
    const int row = key_of[i];
    if (row >= seq) continue;
    bf16* dk_row = dk + static_cast<std::size_t>(row) * D + 2 * t;
    bf16* dv_row = dv + static_cast<std::size_t>(row) * D + 2 * t;
#pragma unroll
    for (int f = 0; f < kDTiles; ++f) {
      *reinterpret_cast<std::uint32_t*>(dk_row + f * 8) = pack_bf16x2(dk_acc[f][2 * i], dk_acc[f][2 * i + 1]);
      *reinterpret_cast<std::uint32_t*>(dv_row + f * 8) = pack_bf16x2(dv_acc[f][2 * i], dv_acc[f][2 * i + 1]);
    }
  }
}

// dq = bf16(accumulator), 8 elements per step (D is a multiple of 8).
__global__ void attention_dq_convert_kernel(const float* dq_accum, bf16* dq, std::size_t groups_of_8) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t g = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; g < groups_of_8; g += stride) {
    const float4 a = reinterpret_cast<const float4*>(dq_accum)[2 * g];
    const float4 b = reinterpret_cast<const float4*>(dq_accum)[2 * g + 1];
    reinterpret_cast<uint4*>(dq)[g] =
        make_uint4(pack_bf16x2(a.x, a.y), pack_bf16x2(a.z, a.w), pack_bf16x2(b.x, b.y), pack_bf16x2(b.z, b.w));
  }
}

std::size_t round_up(std::size_t bytes) { return (bytes + kWorkspaceAlign - 1) / kWorkspaceAlign * kWorkspaceAlign; }

std::size_t row_count(AttentionShape shape) {
  return static_cast<std::size_t>(shape.batch) * static_cast<std::size_t>(shape.heads) *
         static_cast<std::size_t>(shape.seq);
}

template <int D>
void launch_backward(const bf16* q, const bf16* k, const bf16* v, const bf16* o, const bf16* dout, const float* lse,
                     bf16* dq, bf16* dk, bf16* dv, float* delta, float* dq_accum, AttentionShape shape,
                     cudaStream_t stream) {
  const std::size_t rows = row_count(shape);
  // Grid-stride loops: a few waves of blocks whatever the size.
  const auto preprocess_blocks = static_cast<unsigned>(std::min<std::size_t>((rows + kWarps - 1) / kWarps, 65536));
  attention_backward_preprocess_kernel<D><<<preprocess_blocks, kThreads, 0, stream>>>(o, dout, delta, dq_accum, rows);
  TRAINSIM_CUDA_CHECK(cudaGetLastError());

  constexpr std::size_t smem = BackwardSmem<D>::kBytes;
  TRAINSIM_CUDA_CHECK(cudaFuncSetAttribute(attention_backward_kernel<D>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                           static_cast<int>(smem)));
  TRAINSIM_CUDA_CHECK(cudaFuncSetAttribute(attention_backward_kernel<D>,
                                           cudaFuncAttributePreferredSharedMemoryCarveout,
                                           cudaSharedmemCarveoutMaxShared));
  const dim3 grid(static_cast<unsigned>(shape.batch * shape.heads),
                  static_cast<unsigned>((shape.seq + kTile - 1) / kTile));
  const float scale = 1.0f / std::sqrt(static_cast<float>(D));
  attention_backward_kernel<D>
      <<<grid, kThreads, smem, stream>>>(q, k, v, dout, lse, delta, dq_accum, dk, dv, shape.seq, kLog2e * scale, scale);
  TRAINSIM_CUDA_CHECK(cudaGetLastError());

  const std::size_t groups = rows * D / 8;
  constexpr std::size_t kConvertThreads = 256;
  const auto convert_blocks =
      static_cast<unsigned>(std::min<std::size_t>((groups + kConvertThreads - 1) / kConvertThreads, 65536));
  attention_dq_convert_kernel<<<convert_blocks, kConvertThreads, 0, stream>>>(dq_accum, dq, groups);
  TRAINSIM_CUDA_CHECK(cudaGetLastError());
}

void check_pointer(const void* p, const char* name, std::size_t alignment) {
  if (p == nullptr) throw std::invalid_argument(std::string("attention_backward: ") + name + " is null");
  if (reinterpret_cast<std::uintptr_t>(p) % alignment != 0)
    throw std::invalid_argument(std::string("attention_backward: ") + name + " is not " + std::to_string(alignment) +
                                "-byte aligned");
}

}  // namespace

std::size_t attention_backward_workspace_bytes(AttentionShape shape) {
  check_attention_shape(shape);
  const std::size_t rows = row_count(shape);
  return round_up(rows * sizeof(float)) + round_up(rows * static_cast<std::size_t>(shape.head_dim) * sizeof(float));
}

void attention_backward(const bf16* q, const bf16* k, const bf16* v, const bf16* o, const bf16* dout, const float* lse,
                        bf16* dq, bf16* dk, bf16* dv, void* workspace, AttentionShape shape, cudaStream_t stream) {
  check_attention_shape(shape);
  check_pointer(q, "q", 16);
  check_pointer(k, "k", 16);
  check_pointer(v, "v", 16);
  check_pointer(o, "o", 16);
  check_pointer(dout, "dout", 16);
  check_pointer(lse, "lse", alignof(float));
  check_pointer(dq, "dq", 16);
  check_pointer(dk, "dk", 16);
  check_pointer(dv, "dv", 16);
  check_pointer(workspace, "workspace", 16);
  // Workspace: delta (B, H, T), then the fp32 dQ accumulator (B, H, T, D), 256-byte aligned.
  auto* delta = static_cast<float*>(workspace);
  auto* dq_accum =
      reinterpret_cast<float*>(static_cast<unsigned char*>(workspace) + round_up(row_count(shape) * sizeof(float)));
  if (shape.head_dim == 64)
    launch_backward<64>(q, k, v, o, dout, lse, dq, dk, dv, delta, dq_accum, shape, stream);
  else
    launch_backward<128>(q, k, v, o, dout, lse, dq, dk, dv, delta, dq_accum, shape, stream);
}

}  // namespace trainsim::kernels
