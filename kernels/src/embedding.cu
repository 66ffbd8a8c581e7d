// Token + position embedding: forward gather and deterministic backward scatter-add.
//
// Backward: the B*T positions are sorted by token (CUB's stable radix sort, keys = tokens,
// values = positions), so the positions of one token form a run in position order. One
// block per run start sums its dout rows in fp32 and adds the sum to that dwte row once:
// no two blocks touch the same row and the summation order is fixed, so the result is
// bitwise reproducible (atomics would make repeated tokens order-dependent).
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <bit>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <cub/device/device_radix_sort.cuh>
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
constexpr int kMaxThreads = 256;   // threads of a row block (rows are C / 8 vectors wide)
constexpr int kMaxBlocks = 65535;  // grid-stride beyond this many row blocks

// bf16 -> fp32 is exact: the bf16 bits are the high half of the fp32 word.
__device__ __forceinline__ void add_to_fp32x8(float* p, const float (&f)[kVec]) {
  float4* q = reinterpret_cast<float4*>(p);
  float4 lo = q[0];
  float4 hi = q[1];
  lo.x += f[0];
  lo.y += f[1];
  lo.z += f[2];
  lo.w += f[3];
  hi.x += f[4];
  hi.y += f[5];
  hi.z += f[6];
  hi.w += f[7];
  q[0] = lo;
  q[1] = hi;
}

// One block per (b, t) row, one thread per 16-byte vector of channels.
__global__ void embedding_forward_kernel(__nv_bfloat16* out,        // (N, C)
                                         const int* tokens,         // (N)
                                         const __nv_bfloat16* wte,  // (V, C)
                                         const __nv_bfloat16* wpe,  // (T, C) or nullptr
                                         int N, int T, int C, int V) {
  const int vecs = C / kVec;
  for (int bt = static_cast<int>(blockIdx.x); bt < N; bt += static_cast<int>(gridDim.x)) {
    const int token = tokens[bt];
    const bool valid = token >= 0 && token < V;
    const int t = bt % T;
    for (int v = static_cast<int>(threadIdx.x); v < vecs; v += static_cast<int>(blockDim.x)) {
      const int c = v * kVec;
      float x[kVec];
      if (valid) {
        load_bf16x8(wte + static_cast<std::size_t>(token) * C + c, x);
        if (wpe != nullptr) {
          float y[kVec];
          load_bf16x8(wpe + static_cast<std::size_t>(t) * C + c, y);
#pragma unroll
          for (int k = 0; k < kVec; ++k) x[k] += y[k];
        }
      } else {
#pragma unroll
        for (int k = 0; k < kVec; ++k) x[k] = __int_as_float(0x7fc00000);  // quiet NaN: bad token
      }
      store_bf16x8(out + static_cast<std::size_t>(bt) * C + c, x);
    }
  }
}

// Sort keys: the token, or V for a token outside [0, V) (skipped by the accumulation);
// values: the position.
__global__ void embedding_sort_input_kernel(unsigned* keys, int* positions, const int* tokens, int N, int V) {
  for (int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x); i < N;
       i += static_cast<int>(gridDim.x * blockDim.x)) {
    const int token = tokens[i];
    keys[i] = static_cast<unsigned>(token >= 0 && token < V ? token : V);
    positions[i] = i;
  }
}

// One block per sorted index p; the block at the start of a run of equal tokens sums the
// run's dout rows (in position order) and adds the sum to dwte[token].
__global__ void embedding_backward_wte_kernel(float* dwte,                // (V, C)
                                              const __nv_bfloat16* dout,  // (N, C)
                                              const unsigned* keys,       // (N), sorted
                                              const int* positions,       // (N), sorted by key
                                              int N, int C, int V) {
  const int vecs = C / kVec;
  for (int p = static_cast<int>(blockIdx.x); p < N; p += static_cast<int>(gridDim.x)) {
    const unsigned key = keys[p];
    if (key >= static_cast<unsigned>(V) || (p > 0 && keys[p - 1] == key)) continue;  // uniform per block
    for (int v = static_cast<int>(threadIdx.x); v < vecs; v += static_cast<int>(blockDim.x)) {
      const int c = v * kVec;
      float acc[kVec] = {};
      for (int q = p; q < N && keys[q] == key; ++q) {
        float x[kVec];
        load_bf16x8(dout + static_cast<std::size_t>(positions[q]) * C + c, x);
#pragma unroll
        for (int k = 0; k < kVec; ++k) acc[k] += x[k];
      }
      add_to_fp32x8(dwte + static_cast<std::size_t>(key) * C + c, acc);
    }
  }
}

// One block per position t: dwpe[t,:] += sum over b of dout[b,t,:], b in order.
__global__ void embedding_backward_wpe_kernel(float* dwpe,                // (T, C)
                                              const __nv_bfloat16* dout,  // (B, T, C)
                                              int B, int T, int C) {
  const int vecs = C / kVec;
  for (int t = static_cast<int>(blockIdx.x); t < T; t += static_cast<int>(gridDim.x)) {
    for (int v = static_cast<int>(threadIdx.x); v < vecs; v += static_cast<int>(blockDim.x)) {
      const int c = v * kVec;
      float acc[kVec] = {};
      for (int b = 0; b < B; ++b) {
        float x[kVec];
        load_bf16x8(dout + (static_cast<std::size_t>(b) * T + t) * C + c, x);
#pragma unroll
        for (int k = 0; k < kVec; ++k) acc[k] += x[k];
      }
      add_to_fp32x8(dwpe + static_cast<std::size_t>(t) * C + c, acc);
    }
  }
}

// Threads for a block that covers one row of `vecs` vectors: whole warps, at most kMaxThreads.
int row_block_threads(int vecs) { return std::min(kMaxThreads, (vecs + 31) / 32 * 32); }

void check_sizes(const char* what, int B, int T, int C, int V) {
  require(B > 0, what, "B must be positive, got " + std::to_string(B));
  require(T > 0, what, "T must be positive, got " + std::to_string(T));
  require(C > 0, what, "C must be positive, got " + std::to_string(C));
  require(V > 0, what, "V must be positive, got " + std::to_string(V));
  require(C % kVec == 0, what, "C must be a multiple of 8 (16-byte bf16 vectors), got " + std::to_string(C));
  require(static_cast<long long>(B) * T <= INT_MAX, what, "B*T must fit in an int");
}

// The workspace: sort keys and values in and out, then CUB's temporary storage.
struct SortLayout {
  std::size_t keys_in = 0, positions_in = 0, keys_out = 0, positions_out = 0, cub = 0;
  std::size_t cub_bytes = 0, total = 0;
};

constexpr std::size_t align256(std::size_t x) { return (x + 255) / 256 * 256; }

int key_bits(int V) { return std::bit_width(static_cast<unsigned>(V)); }  // keys are in [0, V]

SortLayout sort_layout(int N, int V) {
  SortLayout l;
  const std::size_t array = align256(static_cast<std::size_t>(N) * sizeof(int));
  l.positions_in = l.keys_in + array;
  l.keys_out = l.positions_in + array;
  l.positions_out = l.keys_out + array;
  l.cub = l.positions_out + array;
  TRAINSIM_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, l.cub_bytes, static_cast<const unsigned*>(nullptr),
                                                      static_cast<unsigned*>(nullptr), static_cast<const int*>(nullptr),
                                                      static_cast<int*>(nullptr), N, 0, key_bits(V)));
  l.total = l.cub + l.cub_bytes;
  return l;
}

}  // namespace

void embedding_forward(__nv_bfloat16* out, const int* tokens, const __nv_bfloat16* wte, const __nv_bfloat16* wpe, int B,
                       int T, int C, int V, cudaStream_t stream) {
  constexpr const char* what = "embedding_forward";
  check_sizes(what, B, T, C, V);
  require(out != nullptr, what, "out is null");
  require(tokens != nullptr, what, "tokens is null");
  require(wte != nullptr, what, "wte is null");
  require(aligned16(out) && aligned16(wte) && (wpe == nullptr || aligned16(wpe)), what,
          "out, wte and wpe must be 16-byte aligned");
  const int N = B * T;
  embedding_forward_kernel<<<std::min(N, kMaxBlocks), row_block_threads(C / kVec), 0, stream>>>(out, tokens, wte, wpe,
                                                                                                N, T, C, V);
  TRAINSIM_CUDA_CHECK(cudaGetLastError());
}

std::size_t embedding_backward_workspace_bytes(int B, int T, int V) {
  constexpr const char* what = "embedding_backward_workspace_bytes";
  check_sizes(what, B, T, kVec, V);
  return sort_layout(B * T, V).total;
}

void embedding_backward(float* dwte, float* dwpe, const __nv_bfloat16* dout, const int* tokens, void* workspace,
                        std::size_t workspace_bytes, int B, int T, int C, int V, cudaStream_t stream) {
  constexpr const char* what = "embedding_backward";
  check_sizes(what, B, T, C, V);
  require(dwte != nullptr, what, "dwte is null");
  require(dout != nullptr, what, "dout is null");
  require(tokens != nullptr, what, "tokens is null");
  require(workspace != nullptr, what, "workspace is null");
  require(aligned16(dwte) && aligned16(dout) && (dwpe == nullptr || aligned16(dwpe)), what,
          "dwte, dwpe and dout must be 16-byte aligned");
  require(aligned16(workspace), what, "workspace must be 16-byte aligned");
  const int N = B * T;
  SortLayout l = sort_layout(N, V);
  require(workspace_bytes >= l.total, what,
          "workspace has " + std::to_string(workspace_bytes) + " bytes, needs " + std::to_string(l.total) +
              " (embedding_backward_workspace_bytes)");
  char* base = static_cast<char*>(workspace);
  auto* keys_in = reinterpret_cast<unsigned*>(base + l.keys_in);
  auto* positions_in = reinterpret_cast<int*>(base + l.positions_in);
  auto* keys_out = reinterpret_cast<unsigned*>(base + l.keys_out);
  auto* positions_out = reinterpret_cast<int*>(base + l.positions_out);

  embedding_sort_input_kernel<<<std::min((N + 255) / 256, kMaxBlocks), 256, 0, stream>>>(keys_in, positions_in, tokens,
                                                                                         N, V);
  TRAINSIM_CUDA_CHECK(cudaGetLastError());
  TRAINSIM_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(base + l.cub, l.cub_bytes, keys_in, keys_out, positions_in,
                                                      positions_out, N, 0, key_bits(V), stream));
  const int threads = row_block_threads(C / kVec);
  embedding_backward_wte_kernel<<<std::min(N, kMaxBlocks), threads, 0, stream>>>(dwte, dout, keys_out, positions_out, N,
                                                                                 C, V);
  TRAINSIM_CUDA_CHECK(cudaGetLastError());
  if (dwpe != nullptr) {
    embedding_backward_wpe_kernel<<<std::min(T, kMaxBlocks), threads, 0, stream>>>(dwpe, dout, B, T, C);
    TRAINSIM_CUDA_CHECK(cudaGetLastError());
  }
}

}  // namespace trainsim::kernels
