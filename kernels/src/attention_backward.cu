// Causal attention backward, FlashAttention-2 style (Dao 2023, algorithm 2): one
// block per 64-key tile walks the query tiles from its own to the last (earlier
// ones are fully masked), recomputing P = exp(q k^T / sqrt(D) - lse) instead of
// storing it. dK and dV stay in registers; dQ collects every key tile's share in
// an fp32 buffer through atomics and is converted to bf16 at the end.
//   1. preprocess: delta = rowsum(dout * o); zero the dQ accumulator
//   2. main:       dV += P^T dO;  dP = dO V^T;  dS = P (dP - delta);
//                  dK += dS^T Q / sqrt(D);  dQ += dS K / sqrt(D)
//   3. convert:    dq = bf16(dQ accumulator)
// Matmuls run on bf16 tensor cores through nvcuda::wmma (sm_80+).
// Contract: trainsim/kernels/attention.h; reference: kernels/reference/attention_ref.h.
// sm_90, nvcc 13.0 -Xptxas -v, main kernel: D=128 226 registers, 114,176 B shared
// (2 blocks/SM); D=64 155 registers, 81,408 B (2 blocks/SM); no spills.
#include <cuda_bf16.h>
#include <cuda_pipeline_primitives.h>
#include <cuda_runtime.h>
#include <mma.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>

#include "trainsim/kernels/attention.h"
#include "trainsim/kernels/cuda_check.h"

namespace trainsim::kernels {
namespace {

namespace wmma = nvcuda::wmma;
using bf16 = __nv_bfloat16;

constexpr int kTile = 64;  // Bc = Br: keys and query rows per tile
constexpr int kWarps = 4;  // warp w owns keys 16w..16w+15 of the tile (and, for dQ, those query rows)
constexpr int kThreads = kWarps * 32;
constexpr int kFrag = 16;              // wmma m = n = k
constexpr int kPad = 8;                // bf16 row padding: rows 16 bytes apart mod 128 avoid bank conflicts
constexpr int kScoreLd = kTile + 4;    // fp32 scratch row stride (wmma wants a multiple of 4)
constexpr int kProbLd = kTile + kPad;  // bf16 P^T / dS^T tile row stride
constexpr float kLog2e = 1.442695040888963407f;
constexpr std::size_t kWorkspaceAlign = 256;

// Dynamic shared memory of one block, in bytes from the start; every offset is a
// multiple of 128 (wmma needs 32-byte aligned fragment pointers, cp.async 16).
template <int D>
struct BackwardSmem {
  static constexpr int kLd = D + kPad;  // bf16 row stride of the K, V, Q, dO tiles
  static constexpr std::size_t kTileBytes = std::size_t{kTile} * kLd * sizeof(bf16);
  static constexpr std::size_t kScratchBytes = std::size_t{kWarps} * kFrag * kScoreLd * sizeof(float);
  static constexpr std::size_t kK = 0;
  static constexpr std::size_t kV = kK + kTileBytes;
  static constexpr std::size_t kQ = kV + kTileBytes;
  static constexpr std::size_t kDO = kQ + kTileBytes;
  static constexpr std::size_t kS = kDO + kTileBytes;      // per warp (16, 64) fp32: S^T, then P^T
  static constexpr std::size_t kDP = kS + kScratchBytes;   // per warp (16, 64) fp32: dP^T, then dS^T
  static constexpr std::size_t kDS = kDP + kScratchBytes;  // (64 keys, 64 queries) bf16: P^T, then dS^T
  static constexpr std::size_t kLse = kDS + std::size_t{kTile} * kProbLd * sizeof(bf16);  // (64,) lse log2(e)
  static constexpr std::size_t kDelta = kLse + kTile * sizeof(float);                     // (64,)
  static constexpr std::size_t kBytes = kDelta + kTile * sizeof(float);
  static_assert(kS % 128 == 0 && kDP % 128 == 0 && kDS % 128 == 0 && kLse % 128 == 0);
};

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

// Lanes 2r and 2r+1 share row r of a warp's 16 x 64 block: at step i (0..31) lane
// (r, half) takes column 2 ((i + r/8) mod 32) + half. The pair splits the row into
// even and odd columns; the skew by r/8 puts the 32 lanes of a step on 32 distinct
// banks of the fp32 scratch (row stride 68 words) and 16 distinct words of the bf16
// tile (row stride 36 words).
__device__ __forceinline__ int pair_column(int i, int r, int half) { return 2 * ((i + (r >> 3)) & 31) + half; }

__device__ __forceinline__ std::uint32_t pack_bf16x2(float lo, float hi) {
  const __nv_bfloat162 pair = __floats2bfloat162_rn(lo, hi);
  std::uint32_t bits;
  memcpy(&bits, &pair, sizeof(bits));
  return bits;
}

// A warp's 16 x 64 fp32 block (row stride kScoreLd) as bf16 into rows row0.. (those
// below seq) and columns col0..col0+63 of a (T, D) slice.
template <int D>
__device__ void store_block_bf16(bf16* slice, const float* block, int row0, int col0, int seq, int lane) {
  for (int i = lane; i < kFrag * 8; i += 32) {
    const int r = i / 8;
    const int c = (i % 8) * 8;
    if (row0 + r >= seq) continue;
    const float4 a = *reinterpret_cast<const float4*>(block + r * kScoreLd + c);
    const float4 b = *reinterpret_cast<const float4*>(block + r * kScoreLd + c + 4);
    const uint4 packed =
        make_uint4(pack_bf16x2(a.x, a.y), pack_bf16x2(a.z, a.w), pack_bf16x2(b.x, b.y), pack_bf16x2(b.z, b.w));
    *reinterpret_cast<uint4*>(slice + static_cast<std::size_t>(row0 + r) * D + col0 + c) = packed;
  }
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
template <int D>
__global__ void __launch_bounds__(kThreads)
    attention_backward_kernel(const bf16* q, const bf16* k, const bf16* v, const bf16* dout, const float* lse,
                              const float* delta, float* dq_accum, bf16* dk, bf16* dv, int seq, float scale_log2,
                              float scale) {
  using Smem = BackwardSmem<D>;
  constexpr int kLd = Smem::kLd;
  constexpr int kDFrags = D / kFrag;
  constexpr int kTileFrags = kTile / kFrag;
  using AccFrag = wmma::fragment<wmma::accumulator, kFrag, kFrag, kFrag, float>;
  using RowAFrag = wmma::fragment<wmma::matrix_a, kFrag, kFrag, kFrag, bf16, wmma::row_major>;
  using ColAFrag = wmma::fragment<wmma::matrix_a, kFrag, kFrag, kFrag, bf16, wmma::col_major>;
  using RowBFrag = wmma::fragment<wmma::matrix_b, kFrag, kFrag, kFrag, bf16, wmma::row_major>;
  using ColBFrag = wmma::fragment<wmma::matrix_b, kFrag, kFrag, kFrag, bf16, wmma::col_major>;

  extern __shared__ __align__(128) unsigned char smem[];
  bf16* k_tile = reinterpret_cast<bf16*>(smem + Smem::kK);    // (64 keys, D)
  bf16* v_tile = reinterpret_cast<bf16*>(smem + Smem::kV);    // (64 keys, D)
  bf16* q_tile = reinterpret_cast<bf16*>(smem + Smem::kQ);    // (64 queries, D)
  bf16* do_tile = reinterpret_cast<bf16*>(smem + Smem::kDO);  // (64 queries, D)
  bf16* ds_tile = reinterpret_cast<bf16*>(smem + Smem::kDS);  // (64 keys, 64 queries)
  float* lse_log2 = reinterpret_cast<float*>(smem + Smem::kLse);
  float* delta_tile = reinterpret_cast<float*>(smem + Smem::kDelta);
  const int warp = static_cast<int>(threadIdx.x) / 32;
  const int lane = static_cast<int>(threadIdx.x) % 32;
  float* s_scratch = reinterpret_cast<float*>(smem + Smem::kS) + warp * kFrag * kScoreLd;    // (16, 64)
  float* dp_scratch = reinterpret_cast<float*>(smem + Smem::kDP) + warp * kFrag * kScoreLd;  // (16, 64)
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
  load_tile_async<D>(q_tile, q, key0, seq);
  load_tile_async<D>(do_tile, dout, key0, seq);
  __pipeline_commit();
  load_row_stats(lse_log2, delta_tile, lse, delta, key0, seq);

  AccFrag dk_acc[kDFrags];  // (16 keys, D) of this warp
  AccFrag dv_acc[kDFrags];  // (16 keys, D) of this warp
#pragma unroll
  for (int f = 0; f < kDFrags; ++f) {
    wmma::fill_fragment(dk_acc[f], 0.0f);
    wmma::fill_fragment(dv_acc[f], 0.0f);
  }
  const int r = lane >> 1;  // elementwise: lanes 2r, 2r+1 share key row r of the warp
  const int half = lane & 1;
  const int my_key = key0 + warp * kFrag + r;

  // Pipeline: Q, dO, lse, delta of tile i+1 load while tile i's dQ is computed.
  for (int qt = k_tile_index; qt < num_tiles; ++qt) {
    const int query0 = qt * kTile;
    __pipeline_wait_prior(0);
    __syncthreads();  // this tile's Q, dO, lse, delta are in; every warp is done with the last ds_tile

    // S^T = K Q^T (16 keys x 64 queries), then dP^T = V dO^T, each to fp32 scratch.
    {
      AccFrag acc[kTileFrags];
#pragma unroll
      for (int n = 0; n < kTileFrags; ++n) wmma::fill_fragment(acc[n], 0.0f);
#pragma unroll 1
      for (int f = 0; f < kDFrags; ++f) {
        RowAFrag k_frag;
        wmma::load_matrix_sync(k_frag, k_tile + warp * kFrag * kLd + f * kFrag, kLd);
#pragma unroll
        for (int n = 0; n < kTileFrags; ++n) {
          // Q^T as a column-major B: element (d, query) sits at q_tile[query * kLd + d].
          ColBFrag q_frag;
          wmma::load_matrix_sync(q_frag, q_tile + n * kFrag * kLd + f * kFrag, kLd);
          wmma::mma_sync(acc[n], k_frag, q_frag, acc[n]);
        }
      }
#pragma unroll
      for (int n = 0; n < kTileFrags; ++n) {
        wmma::store_matrix_sync(s_scratch + n * kFrag, acc[n], kScoreLd, wmma::mem_row_major);
        wmma::fill_fragment(acc[n], 0.0f);
      }
#pragma unroll 1
      for (int f = 0; f < kDFrags; ++f) {
        RowAFrag v_frag;
        wmma::load_matrix_sync(v_frag, v_tile + warp * kFrag * kLd + f * kFrag, kLd);
#pragma unroll
        for (int n = 0; n < kTileFrags; ++n) {
          ColBFrag do_frag;
          wmma::load_matrix_sync(do_frag, do_tile + n * kFrag * kLd + f * kFrag, kLd);
          wmma::mma_sync(acc[n], v_frag, do_frag, acc[n]);
        }
      }
#pragma unroll
      for (int n = 0; n < kTileFrags; ++n)
        wmma::store_matrix_sync(dp_scratch + n * kFrag, acc[n], kScoreLd, wmma::mem_row_major);
    }
    __syncwarp();

    // P^T = exp2(S^T scale_log2 - lse log2 e) where query >= key and query < T, else 0;
    // dS^T = P^T (dP^T - delta) / sqrt(D). P^T goes to this warp's ds_tile rows in bf16
    // (for dV), dS^T to dp_scratch in fp32 (rounded to bf16 once dV is done).
#pragma unroll 8
    for (int i = 0; i < 32; ++i) {
      const int c = pair_column(i, r, half);
      const int query = query0 + c;
      const float p =
          (query >= my_key && query < seq) ? exp2f(s_scratch[r * kScoreLd + c] * scale_log2 - lse_log2[c]) : 0.0f;
      dp_scratch[r * kScoreLd + c] = p * (dp_scratch[r * kScoreLd + c] - delta_tile[c]) * scale;
      ds_rows[r * kProbLd + c] = __float2bfloat16(p);
    }
    __syncwarp();

    // dV += P^T dO.
#pragma unroll 1
    for (int kk = 0; kk < kTileFrags; ++kk) {
      RowAFrag p_frag;
      wmma::load_matrix_sync(p_frag, ds_rows + kk * kFrag, kProbLd);
#pragma unroll
      for (int f = 0; f < kDFrags; ++f) {
        RowBFrag do_frag;
        wmma::load_matrix_sync(do_frag, do_tile + kk * kFrag * kLd + f * kFrag, kLd);
        wmma::mma_sync(dv_acc[f], p_frag, do_frag, dv_acc[f]);
      }
    }
    __syncwarp();
#pragma unroll 8
    for (int i = 0; i < 32; ++i) {
      const int c = pair_column(i, r, half);
      ds_rows[r * kProbLd + c] = __float2bfloat16(dp_scratch[r * kScoreLd + c]);
    }
    __syncwarp();

    // dK += dS^T Q (the 1/sqrt(D) is already in dS).
#pragma unroll 1
    for (int kk = 0; kk < kTileFrags; ++kk) {
      RowAFrag ds_frag;
      wmma::load_matrix_sync(ds_frag, ds_rows + kk * kFrag, kProbLd);
#pragma unroll
      for (int f = 0; f < kDFrags; ++f) {
        RowBFrag q_frag;
        wmma::load_matrix_sync(q_frag, q_tile + kk * kFrag * kLd + f * kFrag, kLd);
        wmma::mma_sync(dk_acc[f], ds_frag, q_frag, dk_acc[f]);
      }
    }
    __syncthreads();  // all of ds_tile is written; every warp is done with Q, dO, lse, delta
    if (qt + 1 < num_tiles) {
      load_tile_async<D>(q_tile, q, query0 + kTile, seq);
      load_tile_async<D>(do_tile, dout, query0 + kTile, seq);
      __pipeline_commit();
      load_row_stats(lse_log2, delta_tile, lse, delta, query0 + kTile, seq);
    }

    // dQ += dS K for query rows 16w..16w+15 of the tile, 64 columns at a time, added
    // to the fp32 accumulator with atomics (other key tiles add to the same rows).
    const int dq_row0 = query0 + warp * kFrag;
    if (dq_row0 < seq) {
#pragma unroll
      for (int chunk = 0; chunk < D / kTile; ++chunk) {
        AccFrag acc[kTileFrags];
#pragma unroll
        for (int n = 0; n < kTileFrags; ++n) wmma::fill_fragment(acc[n], 0.0f);
#pragma unroll 1
        for (int kk = 0; kk < kTileFrags; ++kk) {
          // dS as a column-major A: element (query, key) sits at ds_tile[key * kProbLd + query].
          ColAFrag ds_frag;
          wmma::load_matrix_sync(ds_frag, ds_tile + kk * kFrag * kProbLd + warp * kFrag, kProbLd);
#pragma unroll
          for (int n = 0; n < kTileFrags; ++n) {
            RowBFrag k_frag;
            wmma::load_matrix_sync(k_frag, k_tile + kk * kFrag * kLd + chunk * kTile + n * kFrag, kLd);
            wmma::mma_sync(acc[n], ds_frag, k_frag, acc[n]);
          }
        }
#pragma unroll
        for (int n = 0; n < kTileFrags; ++n)
          wmma::store_matrix_sync(s_scratch + n * kFrag, acc[n], kScoreLd, wmma::mem_row_major);
        __syncwarp();
        const int rows = min(kFrag, seq - dq_row0);
        for (int row = 0; row < rows; ++row) {
          float* dst = dq_accum + static_cast<std::size_t>(dq_row0 + row) * D + chunk * kTile;
          atomicAdd(dst + lane, s_scratch[row * kScoreLd + lane]);
          atomicAdd(dst + lane + 32, s_scratch[row * kScoreLd + lane + 32]);
        }
        __syncwarp();
      }
    }
  }

  // dK and dV of this warp's 16 keys, 64 columns at a time through the scratch.
#pragma unroll
  for (int chunk = 0; chunk < D / kTile; ++chunk) {
#pragma unroll
    for (int n = 0; n < kTileFrags; ++n) {
      wmma::store_matrix_sync(s_scratch + n * kFrag, dk_acc[chunk * kTileFrags + n], kScoreLd, wmma::mem_row_major);
      wmma::store_matrix_sync(dp_scratch + n * kFrag, dv_acc[chunk * kTileFrags + n], kScoreLd, wmma::mem_row_major);
    }
    __syncwarp();
    store_block_bf16<D>(dk, s_scratch, key0 + warp * kFrag, chunk * kTile, seq, lane);
    store_block_bf16<D>(dv, dp_scratch, key0 + warp * kFrag, chunk * kTile, seq, lane);
    __syncwarp();
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
