#include "trainer_kernels.h"
#include "trainsim/kernels/cuda_check.h"

#include <cstdint>
#include <initializer_list>

namespace trainsim::trainer {

namespace {

constexpr int kThreads = 256;

unsigned blocks_for(std::size_t n) { return static_cast<unsigned>((n + kThreads - 1) / kThreads); }

// Element idx of a (B, H, T, D) tensor and its offset in a (B, T, S, H, D) row tensor at
// slot 0 (S = 3 for qkv, 1 for the attention output).
__device__ std::size_t row_offset(std::size_t idx, int T, int H, int D, int S) {
  const std::size_t d = idx % D;
  const std::size_t t = (idx / D) % T;
  const std::size_t h = (idx / (static_cast<std::size_t>(D) * T)) % H;
  const std::size_t b = idx / (static_cast<std::size_t>(D) * T * H);
  const std::size_t C = static_cast<std::size_t>(H) * D;
  return (b * T + t) * S * C + h * D + d;
}

__global__ void permute_qkv_kernel(__nv_bfloat16* q, __nv_bfloat16* k, __nv_bfloat16* v, const __nv_bfloat16* qkv,
                                   std::size_t n, int T, int H, int D) {
  const std::size_t idx = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (idx >= n) return;
  const std::size_t src = row_offset(idx, T, H, D, 3), C = static_cast<std::size_t>(H) * D;
  q[idx] = qkv[src];
  k[idx] = qkv[src + C];
  v[idx] = qkv[src + 2 * C];
}

__global__ void unpermute_qkv_kernel(__nv_bfloat16* dqkv, const __nv_bfloat16* dq, const __nv_bfloat16* dk,
                                     const __nv_bfloat16* dv, std::size_t n, int T, int H, int D) {
  const std::size_t idx = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (idx >= n) return;
  const std::size_t dst = row_offset(idx, T, H, D, 3), C = static_cast<std::size_t>(H) * D;
  dqkv[dst] = dq[idx];
  dqkv[dst + C] = dk[idx];
  dqkv[dst + 2 * C] = dv[idx];
}

__global__ void heads_to_rows_kernel(__nv_bfloat16* y, const __nv_bfloat16* o, std::size_t n, int T, int H, int D) {
  const std::size_t idx = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (idx < n) y[row_offset(idx, T, H, D, 1)] = o[idx];
}

__global__ void rows_to_heads_kernel(__nv_bfloat16* o, const __nv_bfloat16* y, std::size_t n, int T, int H, int D) {
  const std::size_t idx = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (idx < n) o[idx] = y[row_offset(idx, T, H, D, 1)];
}

// The same moves in 16-byte vectors (8 bf16 of one head's d), used when D % 8 == 0 and
// every pointer is 16-byte aligned: vector v of the (B, H, T, D) tensor starts at element
// 8 v, and its 8 elements are contiguous in the row tensor too. One element per thread
// moved 2-byte values and ran at 0.6-1.2 TB/s on the H100 (ncu, GPT-2 124M); 16-byte
// vectors move whole 32-byte sectors.
__device__ std::size_t row_offset_vec(std::size_t v, int T, int H, int D, int S) { return row_offset(v * 8, T, H, D, S); }

__global__ void permute_qkv_vec_kernel(uint4* q, uint4* k, uint4* v, const __nv_bfloat16* qkv, std::size_t vecs,
                                       int T, int H, int D) {
  const std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= vecs) return;
  const std::size_t src = row_offset_vec(i, T, H, D, 3), C = static_cast<std::size_t>(H) * D;
  q[i] = *reinterpret_cast<const uint4*>(qkv + src);
  k[i] = *reinterpret_cast<const uint4*>(qkv + src + C);
  v[i] = *reinterpret_cast<const uint4*>(qkv + src + 2 * C);
}

__global__ void unpermute_qkv_vec_kernel(__nv_bfloat16* dqkv, const uint4* dq, const uint4* dk, const uint4* dv,
                                         std::size_t vecs, int T, int H, int D) {
  const std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= vecs) return;
  const std::size_t dst = row_offset_vec(i, T, H, D, 3), C = static_cast<std::size_t>(H) * D;
  *reinterpret_cast<uint4*>(dqkv + dst) = dq[i];
  *reinterpret_cast<uint4*>(dqkv + dst + C) = dk[i];
  *reinterpret_cast<uint4*>(dqkv + dst + 2 * C) = dv[i];
}

__global__ void heads_to_rows_vec_kernel(__nv_bfloat16* y, const uint4* o, std::size_t vecs, int T, int H, int D) {
  const std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < vecs) *reinterpret_cast<uint4*>(y + row_offset_vec(i, T, H, D, 1)) = o[i];
}

__global__ void rows_to_heads_vec_kernel(uint4* o, const __nv_bfloat16* y, std::size_t vecs, int T, int H, int D) {
  const std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < vecs) o[i] = *reinterpret_cast<const uint4*>(y + row_offset_vec(i, T, H, D, 1));
}

__global__ void float_to_bf16_kernel(__nv_bfloat16* out, const float* in, std::size_t n) {
  const std::size_t idx = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (idx < n) out[idx] = __float2bfloat16_rn(in[idx]);
}

__global__ void fill_bf16_kernel(__nv_bfloat16* out, float value, std::size_t n) {
  const std::size_t idx = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (idx < n) out[idx] = __float2bfloat16_rn(value);
}

// 16-byte vectors need whole vectors per head row and aligned tensors.
bool vectors(int D, std::initializer_list<const void*> tensors) {
  if (D % 8 != 0) return false;
  for (const void* p : tensors)
    if (reinterpret_cast<std::uintptr_t>(p) % 16 != 0) return false;
  return true;
}

std::size_t count(int B, int T, int H, int D) {
  return static_cast<std::size_t>(B) * static_cast<std::size_t>(T) * static_cast<std::size_t>(H) *
         static_cast<std::size_t>(D);
}

}  // namespace

void permute_qkv(__nv_bfloat16* q, __nv_bfloat16* k, __nv_bfloat16* v, const __nv_bfloat16* qkv, int B, int T, int H,
                 int D, cudaStream_t stream) {
  const std::size_t n = count(B, T, H, D);
  if (vectors(D, {q, k, v, qkv}))
    permute_qkv_vec_kernel<<<blocks_for(n / 8), kThreads, 0, stream>>>(
        reinterpret_cast<uint4*>(q), reinterpret_cast<uint4*>(k), reinterpret_cast<uint4*>(v), qkv, n / 8, T, H, D);
  else
    permute_qkv_kernel<<<blocks_for(n), kThreads, 0, stream>>>(q, k, v, qkv, n, T, H, D);
  TRAINSIM_CUDA_CHECK(cudaGetLastError());
}

void unpermute_qkv(__nv_bfloat16* dqkv, const __nv_bfloat16* dq, const __nv_bfloat16* dk, const __nv_bfloat16* dv,
                   int B, int T, int H, int D, cudaStream_t stream) {
  const std::size_t n = count(B, T, H, D);
  if (vectors(D, {dqkv, dq, dk, dv}))
    unpermute_qkv_vec_kernel<<<blocks_for(n / 8), kThreads, 0, stream>>>(
        dqkv, reinterpret_cast<const uint4*>(dq), reinterpret_cast<const uint4*>(dk), reinterpret_cast<const uint4*>(dv),
        n / 8, T, H, D);
  else
    unpermute_qkv_kernel<<<blocks_for(n), kThreads, 0, stream>>>(dqkv, dq, dk, dv, n, T, H, D);
  TRAINSIM_CUDA_CHECK(cudaGetLastError());
}

void heads_to_rows(__nv_bfloat16* y, const __nv_bfloat16* o, int B, int T, int H, int D, cudaStream_t stream) {
  const std::size_t n = count(B, T, H, D);
  if (vectors(D, {y, o}))
    heads_to_rows_vec_kernel<<<blocks_for(n / 8), kThreads, 0, stream>>>(y, reinterpret_cast<const uint4*>(o), n / 8, T,
                                                                          H, D);
  else
    heads_to_rows_kernel<<<blocks_for(n), kThreads, 0, stream>>>(y, o, n, T, H, D);
  TRAINSIM_CUDA_CHECK(cudaGetLastError());
}

void rows_to_heads(__nv_bfloat16* o, const __nv_bfloat16* y, int B, int T, int H, int D, cudaStream_t stream) {
  const std::size_t n = count(B, T, H, D);
  if (vectors(D, {o, y}))
    rows_to_heads_vec_kernel<<<blocks_for(n / 8), kThreads, 0, stream>>>(reinterpret_cast<uint4*>(o), y, n / 8, T, H,
                                                                          D);
  else
    rows_to_heads_kernel<<<blocks_for(n), kThreads, 0, stream>>>(o, y, n, T, H, D);
  TRAINSIM_CUDA_CHECK(cudaGetLastError());
}

void float_to_bf16(__nv_bfloat16* out, const float* in, std::size_t n, cudaStream_t stream) {
  float_to_bf16_kernel<<<blocks_for(n), kThreads, 0, stream>>>(out, in, n);
  TRAINSIM_CUDA_CHECK(cudaGetLastError());
}

void fill_bf16(__nv_bfloat16* out, float value, std::size_t n, cudaStream_t stream) {
  fill_bf16_kernel<<<blocks_for(n), kThreads, 0, stream>>>(out, value, n);
  TRAINSIM_CUDA_CHECK(cudaGetLastError());
}

}  // namespace trainsim::trainer
