// Causal attention forward, FlashAttention-2 style (Dao 2023, algorithm 1): one
// block per 64-query tile walks the key tiles 0..its own (later ones are fully
// masked) keeping a running max and sum per row, so the T x T scores never leave
// the SM. QK^T and PV run on bf16 tensor cores through nvcuda::wmma (sm_80+).
// Contract: trainsim/kernels/attention.h; reference: kernels/reference/attention_ref.h.
// sm_90, nvcc 13.0 -Xptxas -v: D=128 250 registers, 61,696 B shared (2 blocks/SM);
// D=64 164 registers, 45,312 B (3 blocks/SM); no spills.
#include <cuda_bf16.h>
#include <cuda_pipeline_primitives.h>
#include <cuda_runtime.h>
#include <mma.h>

#include <climits>
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

constexpr int kTile = 64;  // Br = Bc: query rows and keys per tile
constexpr int kWarps = 4;  // warp w owns query rows 16w..16w+15 of the tile
constexpr int kThreads = kWarps * 32;
constexpr int kFrag = 16;              // wmma m = n = k
constexpr int kPad = 8;                // bf16 row padding: rows 16 bytes apart mod 128 avoid bank conflicts
constexpr int kScoreLd = kTile + 4;    // fp32 score scratch row stride (wmma wants a multiple of 4)
constexpr int kProbLd = kTile + kPad;  // bf16 probability tile row stride
constexpr float kLn2 = 0.693147180559945309f;
constexpr float kLog2e = 1.442695040888963407f;

// Dynamic shared memory of one block, in bytes from the start; every offset is a
// multiple of 128 (wmma needs 32-byte aligned fragment pointers, cp.async 16).
template <int D>
struct ForwardSmem {
  static constexpr int kLd = D + kPad;  // bf16 row stride of the Q, K, V tiles
  static constexpr std::size_t kTileBytes = std::size_t{kTile} * kLd * sizeof(bf16);
  static constexpr std::size_t kScoreBytes = std::size_t{kWarps} * kFrag * kScoreLd * sizeof(float);
  // The Q tile is read once into registers; its space then holds the per-warp scores.
  static constexpr std::size_t kQ = 0;
  static constexpr std::size_t kK = kTileBytes > kScoreBytes ? kTileBytes : kScoreBytes;
  static constexpr std::size_t kV = kK + kTileBytes;
  static constexpr std::size_t kP = kV + kTileBytes;
  static constexpr std::size_t kRow = kP + std::size_t{kWarps} * kFrag * kProbLd * sizeof(bf16);
  static constexpr std::size_t kBytes = kRow + std::size_t{kWarps} * kFrag * sizeof(float);
  static_assert(kK % 128 == 0 && kV % 128 == 0 && kP % 128 == 0 && kRow % 128 == 0);
};

// Rows [row0, row0 + 64) of one (T, D) slice into a padded tile with cp.async. Rows
// at or past T are zeroed: masked probabilities are 0, and 0 * (stale NaN) is NaN.
template <int D>
__device__ void load_tile_async(bf16* tile, const bf16* slice, int row0, int seq) {
  constexpr int kChunks = D / 8;  // 16-byte chunks per row
  for (int c = static_cast<int>(threadIdx.x); c < kTile * kChunks; c += kThreads) {
    const int r = c / kChunks;
    const int col = (c % kChunks) * 8;
    bf16* dst = tile + r * ForwardSmem<D>::kLd + col;
    if (row0 + r < seq)
      __pipeline_memcpy_async(dst, slice + static_cast<std::size_t>(row0 + r) * D + col, 16);
    else
      *reinterpret_cast<uint4*>(dst) = make_uint4(0, 0, 0, 0);
  }
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

// A warp's 16 x 64 fp32 block (row stride kScoreLd), row i times row_scale[i], as
// bf16 into rows row0.. (those below seq) and columns col0..col0+63 of a (T, D) slice.
template <int D>
__device__ void store_block_bf16(bf16* slice, const float* block, const float* row_scale, int row0, int col0, int seq,
                                 int lane) {
  for (int i = lane; i < kFrag * 8; i += 32) {
    const int r = i / 8;
    const int c = (i % 8) * 8;
    if (row0 + r >= seq) continue;
    const float s = row_scale[r];
    const float4 a = *reinterpret_cast<const float4*>(block + r * kScoreLd + c);
    const float4 b = *reinterpret_cast<const float4*>(block + r * kScoreLd + c + 4);
    const uint4 packed = make_uint4(pack_bf16x2(a.x * s, a.y * s), pack_bf16x2(a.z * s, a.w * s),
                                    pack_bf16x2(b.x * s, b.y * s), pack_bf16x2(b.z * s, b.w * s));
    *reinterpret_cast<uint4*>(slice + static_cast<std::size_t>(row0 + r) * D + col0 + c) = packed;
  }
}

// grid (B*H, ceil(T/64)), 128 threads. scale_log2 = log2(e) / sqrt(D): scores are
// kept in base 2 so that exp is one exp2f.
template <int D>
__global__ void __launch_bounds__(kThreads) attention_forward_kernel(const bf16* q, const bf16* k, const bf16* v,
                                                                     bf16* o, float* lse, int seq, float scale_log2) {
  using Smem = ForwardSmem<D>;
  constexpr int kLd = Smem::kLd;
  constexpr int kDFrags = D / kFrag;
  using AccFrag = wmma::fragment<wmma::accumulator, kFrag, kFrag, kFrag, float>;
  using RowAFrag = wmma::fragment<wmma::matrix_a, kFrag, kFrag, kFrag, bf16, wmma::row_major>;

  extern __shared__ __align__(128) unsigned char smem[];
  bf16* q_tile = reinterpret_cast<bf16*>(smem + Smem::kQ);  // (64, D), until Q is in registers
  bf16* k_tile = reinterpret_cast<bf16*>(smem + Smem::kK);  // (64, D)
  bf16* v_tile = reinterpret_cast<bf16*>(smem + Smem::kV);  // (64, D)
  const int warp = static_cast<int>(threadIdx.x) / 32;
  const int lane = static_cast<int>(threadIdx.x) % 32;
  float* scores = reinterpret_cast<float*>(smem + Smem::kQ) + warp * kFrag * kScoreLd;  // (16, 64) fp32
  bf16* probs = reinterpret_cast<bf16*>(smem + Smem::kP) + warp * kFrag * kProbLd;      // (16, 64) bf16
  float* row_scale = reinterpret_cast<float*>(smem + Smem::kRow) + warp * kFrag;        // (16,)

  // Later query tiles see more key tiles: start the heaviest blocks first.
  const int q_tile_index = static_cast<int>(gridDim.y - 1 - blockIdx.y);
  const int row0 = q_tile_index * kTile;
  const std::size_t slice = static_cast<std::size_t>(blockIdx.x) * static_cast<std::size_t>(seq);
  q += slice * D;
  k += slice * D;
  v += slice * D;
  o += slice * D;
  lse += slice;

  load_tile_async<D>(q_tile, q, row0, seq);
  load_tile_async<D>(k_tile, k, 0, seq);
  __pipeline_commit();
  __pipeline_wait_prior(0);
  __syncthreads();
  RowAFrag q_frag[kDFrags];  // this warp's 16 query rows, all of D
#pragma unroll
  for (int f = 0; f < kDFrags; ++f) wmma::load_matrix_sync(q_frag[f], q_tile + warp * kFrag * kLd + f * kFrag, kLd);
  __syncthreads();  // the Q tile's space becomes score scratch

  // The accumulator layout is opaque; loading a block whose entries are their own
  // row numbers tells each thread which row each of its elements belongs to.
  for (int i = lane; i < kFrag * kFrag; i += 32)
    scores[(i / kFrag) * kScoreLd + i % kFrag] = static_cast<float>(i / kFrag);
  __syncwarp();
  AccFrag rows_of;
  wmma::load_matrix_sync(rows_of, scores, kScoreLd, wmma::mem_row_major);
  int elem_row[AccFrag::num_elements];
#pragma unroll
  for (int e = 0; e < AccFrag::num_elements; ++e) elem_row[e] = static_cast<int>(rows_of.x[e]);
  __syncwarp();

  AccFrag o_acc[kDFrags];  // (16, D) unnormalized output of this warp's rows
#pragma unroll
  for (int f = 0; f < kDFrags; ++f) wmma::fill_fragment(o_acc[f], 0.0f);
  const int r = lane >> 1;  // softmax: lanes 2r, 2r+1 hold row r's running max and sum
  const int half = lane & 1;
  const int tile_row = warp * kFrag + r;  // the row within the 64-query tile
  float m_run = -INFINITY;                // running max of base-2 scores
  float l_run = 0.0f;                     // running sum of exp2(score - m_run)

  // Pipeline: V(j) loads while S(j) and its softmax run; K(j+1) while P(j) V(j) runs.
  for (int kt = 0; kt <= q_tile_index; ++kt) {
    load_tile_async<D>(v_tile, v, kt * kTile, seq);
    __pipeline_commit();

    // S = Q K^T for this warp's 16 rows x 64 keys.
    {
      AccFrag s_acc[kTile / kFrag];
#pragma unroll
      for (int n = 0; n < kTile / kFrag; ++n) wmma::fill_fragment(s_acc[n], 0.0f);
#pragma unroll
      for (int f = 0; f < kDFrags; ++f) {
#pragma unroll
        for (int n = 0; n < kTile / kFrag; ++n) {
          // K^T as a column-major B: element (d, key) sits at k_tile[key * kLd + d].
          wmma::fragment<wmma::matrix_b, kFrag, kFrag, kFrag, bf16, wmma::col_major> k_frag;
          wmma::load_matrix_sync(k_frag, k_tile + n * kFrag * kLd + f * kFrag, kLd);
          wmma::mma_sync(s_acc[n], q_frag[f], k_frag, s_acc[n]);
        }
      }
#pragma unroll
      for (int n = 0; n < kTile / kFrag; ++n)
        wmma::store_matrix_sync(scores + n * kFrag, s_acc[n], kScoreLd, wmma::mem_row_major);
    }
    __syncwarp();

    // Online softmax. Only the diagonal tile is masked; its column 0 is always
    // visible, so every row max is finite and exp2f(-inf - m) = 0 is safe.
    const bool diagonal = kt == q_tile_index;
    float tile_max = -INFINITY;
#pragma unroll 8
    for (int i = 0; i < 32; ++i) {
      const int c = pair_column(i, r, half);
      const float s = scores[r * kScoreLd + c] * scale_log2;
      if (!diagonal || c <= tile_row) tile_max = fmaxf(tile_max, s);
    }
    tile_max = fmaxf(tile_max, __shfl_xor_sync(0xffffffffu, tile_max, 1));
    const float m_new = fmaxf(m_run, tile_max);
    float tile_sum = 0.0f;
#pragma unroll 8
    for (int i = 0; i < 32; ++i) {
      const int c = pair_column(i, r, half);
      const float s = scores[r * kScoreLd + c] * scale_log2;
      const float p = (!diagonal || c <= tile_row) ? exp2f(s - m_new) : 0.0f;
      probs[r * kProbLd + c] = __float2bfloat16(p);
      tile_sum += p;
    }
    tile_sum += __shfl_xor_sync(0xffffffffu, tile_sum, 1);
    const float alpha = exp2f(m_run - m_new);  // 0 on the first tile (m_run = -inf)
    l_run = l_run * alpha + tile_sum;
    m_run = m_new;
    if (half == 0) row_scale[r] = alpha;
    __syncwarp();
    float elem_alpha[AccFrag::num_elements];
#pragma unroll
    for (int e = 0; e < AccFrag::num_elements; ++e) elem_alpha[e] = row_scale[elem_row[e]];
#pragma unroll
    for (int f = 0; f < kDFrags; ++f)
#pragma unroll
      for (int e = 0; e < AccFrag::num_elements; ++e) o_acc[f].x[e] *= elem_alpha[e];

    __pipeline_wait_prior(0);
    __syncthreads();  // V(j) has landed; every warp is done with K(j)
    if (kt < q_tile_index) {
      load_tile_async<D>(k_tile, k, (kt + 1) * kTile, seq);
      __pipeline_commit();
    }

    // O += P V.
#pragma unroll 1
    for (int kk = 0; kk < kTile / kFrag; ++kk) {
      RowAFrag p_frag;
      wmma::load_matrix_sync(p_frag, probs + kk * kFrag, kProbLd);
#pragma unroll
      for (int f = 0; f < kDFrags; ++f) {
        wmma::fragment<wmma::matrix_b, kFrag, kFrag, kFrag, bf16, wmma::row_major> v_frag;
        wmma::load_matrix_sync(v_frag, v_tile + kk * kFrag * kLd + f * kFrag, kLd);
        wmma::mma_sync(o_acc[f], p_frag, v_frag, o_acc[f]);
      }
    }
    __pipeline_wait_prior(0);
    __syncthreads();  // K(j+1) has landed; every warp is done with V(j)
  }

  // o = O / l; lse = (m + log2 l) ln 2, back from base 2.
  if (half == 0) {
    row_scale[r] = 1.0f / l_run;
    if (row0 + tile_row < seq) lse[row0 + tile_row] = (m_run + log2f(l_run)) * kLn2;
  }
  __syncwarp();
#pragma unroll
  for (int chunk = 0; chunk < D / kTile; ++chunk) {
#pragma unroll
    for (int n = 0; n < kTile / kFrag; ++n)
      wmma::store_matrix_sync(scores + n * kFrag, o_acc[chunk * (kTile / kFrag) + n], kScoreLd, wmma::mem_row_major);
    __syncwarp();
    store_block_bf16<D>(o, scores, row_scale, row0 + warp * kFrag, chunk * kTile, seq, lane);
    __syncwarp();
  }
}

template <int D>
void launch_forward(const bf16* q, const bf16* k, const bf16* v, bf16* o, float* lse, AttentionShape shape,
                    cudaStream_t stream) {
  constexpr std::size_t smem = ForwardSmem<D>::kBytes;
  TRAINSIM_CUDA_CHECK(cudaFuncSetAttribute(attention_forward_kernel<D>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                           static_cast<int>(smem)));
  const dim3 grid(static_cast<unsigned>(shape.batch * shape.heads),
                  static_cast<unsigned>((shape.seq + kTile - 1) / kTile));
  const float scale_log2 = kLog2e / std::sqrt(static_cast<float>(D));
  attention_forward_kernel<D><<<grid, kThreads, smem, stream>>>(q, k, v, o, lse, shape.seq, scale_log2);
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
