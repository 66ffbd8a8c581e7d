// Causal attention forward, FlashAttention-2 style (Dao 2023, algorithm 1): one
// block per query tile walks the key tiles up to its diagonal keeping a running max
// and sum per row, so the T x T scores never leave the SM. QK^T and PV run on bf16
// tensor cores through mma.sync m16n8k16 (sm_80+) fed by ldmatrix: each warp owns 16
// query rows and keeps its Q fragments, the scores S, the probabilities P (the S
// accumulator of two adjacent n8 tiles is the A fragment of one k16 slice) and the
// O accumulator in registers; only the K and V tiles go through shared memory.
// Contract: trainsim/kernels/attention.h; reference: kernels/reference/attention_ref.h.
// sm_90, nvcc 13.0 -Xptxas -v: D=64 (8 warps, 128 rows, K/V double-buffered) 128
// registers (8 bytes spilled), 55,296 B shared (2 blocks/SM); D=128 (4 warps, 64 rows,
// single-buffered) 166 registers, 52,224 B (3 blocks/SM), no spills.
#include <cuda_bf16.h>
#include <cuda_pipeline_primitives.h>
#include <cuda_runtime.h>

#include <climits>
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

constexpr int kTile = 64;     // Bc: keys per tile; also the unit of the shape check
constexpr int kWarpRows = 16;  // query rows per warp (the mma m)
constexpr int kPad = 8;        // bf16 row padding: rows 16 bytes apart mod 128, so ldmatrix is conflict free
constexpr float kLn2 = 0.693147180559945309f;
constexpr float kLog2e = 1.442695040888963407f;

// D = 64: 128 query rows, 8 warps per block; D = 128: 64 rows, 4 warps (registers).
template <int D>
struct ForwardConfig {
  static constexpr int kWarps = D == 64 ? 8 : 4;
  static constexpr int kThreads = kWarps * 32;
  static constexpr int kRows = kWarps * kWarpRows;  // Br
  static constexpr int kMinBlocks = D == 64 ? 2 : 3;
  // D = 64 double-buffers K and V (one barrier per key tile, loads overlap a whole
  // tile); D = 128 keeps one buffer, as 2 x 87,040 B would cost its third block/SM.
  static constexpr int kKvStages = D == 64 ? 2 : 1;
  static constexpr int kLd = D + kPad;  // bf16 row stride of the Q, K, V tiles
  // Dynamic shared memory in bytes from the start; offsets are multiples of 128.
  // Buffer b of K at kK + b * kKvBytes, of V at kV + b * kKvBytes.
  static constexpr std::size_t kKvBytes = std::size_t{kTile} * kLd * sizeof(bf16);
  static constexpr std::size_t kQ = 0;
  static constexpr std::size_t kK = kQ + std::size_t{kRows} * kLd * sizeof(bf16);
  static constexpr std::size_t kV = kK + kKvStages * kKvBytes;
  static constexpr std::size_t kBytes = kV + kKvStages * kKvBytes;
  static_assert(kK % 128 == 0 && kV % 128 == 0 && kKvBytes % 128 == 0 && kBytes % 128 == 0);
};

// Rows [row0, row0 + kRowsToLoad) of one (T, D) slice into a padded tile with
// cp.async. Rows at or past T are zeroed: masked probabilities are 0, and
// 0 * (stale NaN) is NaN.
template <int D, int kRowsToLoad>
__device__ void load_tile_async(bf16* tile, const bf16* slice, int row0, int seq) {
  using Cfg = ForwardConfig<D>;
  constexpr int kChunks = D / 8;  // 16-byte chunks per row
  for (int c = static_cast<int>(threadIdx.x); c < kRowsToLoad * kChunks; c += Cfg::kThreads) {
    const int r = c / kChunks;
    const int col = (c % kChunks) * 8;
    bf16* dst = tile + r * Cfg::kLd + col;
    if (row0 + r < seq)
      __pipeline_memcpy_async(dst, slice + static_cast<std::size_t>(row0 + r) * D + col, 16);
    else
      *reinterpret_cast<uint4*>(dst) = make_uint4(0, 0, 0, 0);
  }
}

// grid (B*H, ceil(T/Br)), 32 * kWarps threads. scale_log2 = log2(e) / sqrt(D):
// scores are kept in base 2 so that exp is one exp2f.
template <int D>
__global__ void __launch_bounds__(ForwardConfig<D>::kThreads, ForwardConfig<D>::kMinBlocks)
    attention_forward_kernel(const bf16* q, const bf16* k, const bf16* v, bf16* o, float* lse, int seq,
                             float scale_log2) {
  using Cfg = ForwardConfig<D>;
  constexpr int kLd = Cfg::kLd;
  constexpr int kDSlices = D / 16;   // k16 slices of D (QK^T)
  constexpr int kDTiles = D / 8;     // n8 tiles of D (PV)
  constexpr int kKeyTiles = kTile / 8;  // n8 tiles of the keys (QK^T)

  extern __shared__ __align__(128) unsigned char smem[];
  bf16* q_tile = reinterpret_cast<bf16*>(smem + Cfg::kQ);  // (Br, D)
  // Buffer b of the (64, D) K and V tiles.
  auto k_buf = [&](int b) { return reinterpret_cast<bf16*>(smem + Cfg::kK + b * Cfg::kKvBytes); };
  auto v_buf = [&](int b) { return reinterpret_cast<bf16*>(smem + Cfg::kV + b * Cfg::kKvBytes); };
  const int warp = static_cast<int>(threadIdx.x) / 32;
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const int g = lane >> 2;  // mma groupID: accumulator rows g and g + 8
  const int t = lane & 3;   // mma threadID_in_group: accumulator columns 2t, 2t + 1

  // Later query tiles see more key tiles: start the heaviest blocks first.
  const int q_tile_index = static_cast<int>(gridDim.y - 1 - blockIdx.y);
  const int row0 = q_tile_index * Cfg::kRows;
  const std::size_t slice = static_cast<std::size_t>(blockIdx.x) * static_cast<std::size_t>(seq);
  q += slice * D;
  k += slice * D;
  v += slice * D;
  o += slice * D;
  lse += slice;

  // Key tiles past the block's last row are fully masked, those past T absent.
  const int last_row = min(row0 + Cfg::kRows, seq) - 1;
  const int key_tiles = last_row / kTile + 1;
  const int warp_row0 = row0 + warp * kWarpRows;  // this warp's first query row
  const int warp_tiles = warp_row0 < seq ? (warp_row0 + kWarpRows - 1) / kTile + 1 : 0;  // 64-aligned: see below

  load_tile_async<D, Cfg::kRows>(q_tile, q, row0, seq);
  load_tile_async<D, kTile>(k_buf(0), k, 0, seq);
  if constexpr (Cfg::kKvStages == 2) load_tile_async<D, kTile>(v_buf(0), v, 0, seq);
  __pipeline_commit();
  __pipeline_wait_prior(0);
  __syncthreads();

  // This warp's 16 query rows, all of D, as A fragments (the Q tile stays put).
  std::uint32_t q_frag[kDSlices][4];
#pragma unroll
  for (int f = 0; f < kDSlices; ++f)
    ldmatrix_x4(q_frag[f], q_tile + (warp * kWarpRows + (lane & 15)) * kLd + f * 16 + (lane >> 4) * 8);

  float o_acc[kDTiles][4];  // (16, D) unnormalized output of this warp's rows
#pragma unroll
  for (int f = 0; f < kDTiles; ++f)
#pragma unroll
    for (int e = 0; e < 4; ++e) o_acc[f][e] = 0.0f;
  // Rows g and g + 8 of the warp: running max of base-2 scores (scaled), and this
  // thread's share of the running sum of exp2(score - max) (the quad sums at the end).
  float m_run[2] = {-INFINITY, -INFINITY};
  float l_run[2] = {0.0f, 0.0f};
  const int row_of[2] = {warp_row0 + g, warp_row0 + g + 8};

  // Pipeline, two stages: K(j+1) and V(j+1) load into the other buffers while tile j
  // is computed. One stage: V(j) loads while S(j) and its softmax run; K(j+1) while
  // P(j) V(j) runs.
  for (int kt = 0; kt < key_tiles; ++kt) {
    const int buf = Cfg::kKvStages == 2 ? (kt & 1) : 0;
    const bf16* k_tile = k_buf(buf);
    const bf16* v_tile = v_buf(buf);
    if constexpr (Cfg::kKvStages == 2) {
      if (kt > 0) {
        __pipeline_wait_prior(0);
        // K(j), V(j) have landed; every warp is done with tile j - 1, i.e. with the
        // other buffers (tile 0 was waited for before the Q fragments were read).
        __syncthreads();
      }
      if (kt + 1 < key_tiles) {
        load_tile_async<D, kTile>(k_buf(buf ^ 1), k, (kt + 1) * kTile, seq);
        load_tile_async<D, kTile>(v_buf(buf ^ 1), v, (kt + 1) * kTile, seq);
        __pipeline_commit();
      }
    } else {
      load_tile_async<D, kTile>(v_buf(0), v, kt * kTile, seq);
      __pipeline_commit();
    }

    // Warp rows are 16-aligned and key tiles 64-aligned, so a warp either sees key
    // kt * 64 from all its rows (then every row has a visible key in the tile) or
    // from none (the whole tile is masked for it and skipped).
    const bool active = kt < warp_tiles;
    std::uint32_t p_frag[kTile / 16][4];  // P (16 x 64) as A fragments of four k16 slices
    if (active) {
      // S = Q K^T for this warp's 16 rows x 64 keys.
      float s[kKeyTiles][4];
#pragma unroll
      for (int n = 0; n < kKeyTiles; ++n)
#pragma unroll
        for (int e = 0; e < 4; ++e) s[n][e] = 0.0f;
#pragma unroll
      for (int f = 0; f < kDSlices; ++f) {
#pragma unroll
        for (int np = 0; np < kKeyTiles / 2; ++np) {
          // K^T as the col-major B: element (d, key) at k_tile[key * kLd + d].
          // Matrices: keys 16np + {0..7, 0..7, 8..15, 8..15} x d 16f + {0, 8, 0, 8}.
          std::uint32_t kb[4];
          ldmatrix_x4(kb, k_tile + (np * 16 + (lane & 7) + ((lane >> 4) << 3)) * kLd + f * 16 + ((lane >> 3) & 1) * 8);
          mma_bf16_16816(s[2 * np], q_frag[f], kb[0], kb[1]);
          mma_bf16_16816(s[2 * np + 1], q_frag[f], kb[2], kb[3]);
        }
      }

      // Causal mask, only where the tile reaches past the warp's first row.
      if (kt * kTile + kTile - 1 > warp_row0) {
#pragma unroll
        for (int n = 0; n < kKeyTiles; ++n)
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            const int key = kt * kTile + n * 8 + 2 * t + (e & 1);
            if (key > row_of[e >> 1]) s[n][e] = -INFINITY;
          }
      }

      // Online softmax on the accumulator registers; the 4 lanes of a quad share a row.
      float tile_max[2] = {-INFINITY, -INFINITY};
#pragma unroll
      for (int n = 0; n < kKeyTiles; ++n) {
        tile_max[0] = fmaxf(tile_max[0], fmaxf(s[n][0], s[n][1]));
        tile_max[1] = fmaxf(tile_max[1], fmaxf(s[n][2], s[n][3]));
      }
      float alpha[2];
      float m_use[2];
#pragma unroll
      for (int i = 0; i < 2; ++i) {
        tile_max[i] = fmaxf(tile_max[i], __shfl_xor_sync(0xffffffffu, tile_max[i], 1));
        tile_max[i] = fmaxf(tile_max[i], __shfl_xor_sync(0xffffffffu, tile_max[i], 2));
        const float m_new = fmaxf(m_run[i], tile_max[i] * scale_log2);
        // Every row has a visible key here, so m_new is finite; guard anyway.
        m_use[i] = m_new == -INFINITY ? 0.0f : m_new;
        alpha[i] = exp2f(m_run[i] - m_use[i]);  // 0 on the first tile (m_run = -inf)
        m_run[i] = m_new;
      }
      float tile_sum[2] = {0.0f, 0.0f};
#pragma unroll
      for (int n = 0; n < kKeyTiles; ++n)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          s[n][e] = exp2f(fmaf(s[n][e], scale_log2, -m_use[e >> 1]));  // masked: exp2(-inf) = 0
          tile_sum[e >> 1] += s[n][e];
        }
#pragma unroll
      for (int i = 0; i < 2; ++i) l_run[i] = l_run[i] * alpha[i] + tile_sum[i];
#pragma unroll
      for (int f = 0; f < kDTiles; ++f) {
        o_acc[f][0] *= alpha[0];
        o_acc[f][1] *= alpha[0];
        o_acc[f][2] *= alpha[1];
        o_acc[f][3] *= alpha[1];
      }
      // Accumulators of key tiles 2j, 2j+1 are the A fragment of key slice j.
#pragma unroll
      for (int j = 0; j < kTile / 16; ++j) {
        p_frag[j][0] = pack_bf16x2(s[2 * j][0], s[2 * j][1]);
        p_frag[j][1] = pack_bf16x2(s[2 * j][2], s[2 * j][3]);
        p_frag[j][2] = pack_bf16x2(s[2 * j + 1][0], s[2 * j + 1][1]);
        p_frag[j][3] = pack_bf16x2(s[2 * j + 1][2], s[2 * j + 1][3]);
      }
    }

    if constexpr (Cfg::kKvStages == 1) {
      __pipeline_wait_prior(0);
      __syncthreads();  // V(j) has landed; every warp is done with K(j)
      if (kt + 1 < key_tiles) {
        load_tile_async<D, kTile>(k_buf(0), k, (kt + 1) * kTile, seq);
        __pipeline_commit();
      }
    }

    // O += P V.
    if (active) {
#pragma unroll
      for (int j = 0; j < kTile / 16; ++j) {
#pragma unroll
        for (int dp = 0; dp < kDTiles / 2; ++dp) {
          // V as the B operand, transposed by ldmatrix: element (key, d) at
          // v_tile[key * kLd + d]. Matrices: keys 16j + {0, 8, 0, 8} x d 16dp + {0, 0, 8, 8}.
          std::uint32_t vb[4];
          ldmatrix_x4_trans(vb, v_tile + (j * 16 + (lane & 15)) * kLd + dp * 16 + (lane >> 4) * 8);
          mma_bf16_16816(o_acc[2 * dp], p_frag[j], vb[0], vb[1]);
          mma_bf16_16816(o_acc[2 * dp + 1], p_frag[j], vb[2], vb[3]);
        }
      }
    }
    if constexpr (Cfg::kKvStages == 1) {
      __pipeline_wait_prior(0);
      __syncthreads();  // K(j+1) has landed; every warp is done with V(j)
    }
  }

  // o = O / l; lse = (m + log2 l) ln 2, back from base 2.
#pragma unroll
  for (int i = 0; i < 2; ++i) {
    l_run[i] += __shfl_xor_sync(0xffffffffu, l_run[i], 1);
    l_run[i] += __shfl_xor_sync(0xffffffffu, l_run[i], 2);
  }
#pragma unroll
  for (int i = 0; i < 2; ++i) {
    const int row = row_of[i];
    if (row >= seq) continue;
    const float inv = 1.0f / l_run[i];
    bf16* out = o + static_cast<std::size_t>(row) * D + 2 * t;
#pragma unroll
    for (int f = 0; f < kDTiles; ++f)
      *reinterpret_cast<std::uint32_t*>(out + f * 8) = pack_bf16x2(o_acc[f][2 * i] * inv, o_acc[f][2 * i + 1] * inv);
    if (t == 0) lse[row] = (m_run[i] + log2f(l_run[i])) * kLn2;
  }
}

template <int D>
void launch_forward(const bf16* q, const bf16* k, const bf16* v, bf16* o, float* lse, AttentionShape shape,
                    cudaStream_t stream) {
  using Cfg = ForwardConfig<D>;
  constexpr std::size_t smem = Cfg::kBytes;
  TRAINSIM_CUDA_CHECK(cudaFuncSetAttribute(attention_forward_kernel<D>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                           static_cast<int>(smem)));
  const dim3 grid(static_cast<unsigned>(shape.batch * shape.heads),
                  static_cast<unsigned>((shape.seq + Cfg::kRows - 1) / Cfg::kRows));
  const float scale_log2 = kLog2e / std::sqrt(static_cast<float>(D));
  attention_forward_kernel<D><<<grid, Cfg::kThreads, smem, stream>>>(q, k, v, o, lse, shape.seq, scale_log2);
  TRAINSIM_CUDA_CHECK(cudaGetLastError());
}

void check_pointer(const void* p, const char* name) {
  if (p == nullptr) throw std::invalid_argument(std::string("attention_forward: ") + name + " is null");
  if (reinterpret_cast<std::uintptr_t>(p) % 16 != 0)
    throw std::invalid_argument(std::string("attention_forward: ") + name + " is not 16-byte aligned");
}

}  // namespace

void check_attention_shape(AttentionShape shape) {
  const std::string got = "batch " + std::to_string(shape.batch) + ", heads " + std::to_string(shape.heads) + ", seq " +
                          std::to_string(shape.seq) + ", head_dim " + std::to_string(shape.head_dim);
  if (shape.batch <= 0 || shape.heads <= 0 || shape.seq <= 0 || shape.head_dim <= 0)
    throw std::invalid_argument("attention: every size must be positive, got " + got);
  if (shape.head_dim != 64 && shape.head_dim != 128)
    throw std::invalid_argument("attention: head_dim must be 64 or 128, got " + got);
  // B*H is grid.x (limit 2^31 - 1); the tile count is grid.y (limit 65535).
  if (static_cast<long long>(shape.batch) * shape.heads > INT_MAX)
    throw std::invalid_argument("attention: batch * heads must be at most 2^31 - 1, got " + got);
  if ((static_cast<long long>(shape.seq) + kTile - 1) / kTile > 65535)
    throw std::invalid_argument("attention: seq must be at most 65535 * 64, got " + got);
}

void attention_forward(const bf16* q, const bf16* k, const bf16* v, bf16* o, float* lse, AttentionShape shape,
                       cudaStream_t stream) {
  check_attention_shape(shape);
  check_pointer(q, "q");
  check_pointer(k, "k");
  check_pointer(v, "v");
  check_pointer(o, "o");
  if (lse == nullptr) throw std::invalid_argument("attention_forward: lse is null");
  if (reinterpret_cast<std::uintptr_t>(lse) % alignof(float) != 0)
    throw std::invalid_argument("attention_forward: lse is not 4-byte aligned");
  if (shape.head_dim == 64)
    launch_forward<64>(q, k, v, o, lse, shape, stream);
  else
    launch_forward<128>(q, k, v, o, lse, shape, stream);
}

}  // namespace trainsim::kernels
