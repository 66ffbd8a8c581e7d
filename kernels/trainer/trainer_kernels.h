#pragma once
// The trainer's own small kernels (trainer_kernels.cu): moving q, k, v between the QKV
// GEMM's row layout and the flash kernels' [B, H, T, D] layout, and fp32 -> bf16 copies.
// Asynchronous on `stream`; a failed launch throws kernels::CudaError.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstddef>

namespace trainsim::trainer {

// qkv (B, T, 3, H, D) -> q, k, v, each (B, H, T, D).
void permute_qkv(__nv_bfloat16* q, __nv_bfloat16* k, __nv_bfloat16* v, const __nv_bfloat16* qkv, int B, int T, int H,
                 int D, cudaStream_t stream);
// The inverse: dq, dk, dv (B, H, T, D) -> dqkv (B, T, 3, H, D).
void unpermute_qkv(__nv_bfloat16* dqkv, const __nv_bfloat16* dq, const __nv_bfloat16* dk, const __nv_bfloat16* dv,
                   int B, int T, int H, int D, cudaStream_t stream);
// o (B, H, T, D) -> y (B, T, H, D), the rows the output projection reads.
void heads_to_rows(__nv_bfloat16* y, const __nv_bfloat16* o, int B, int T, int H, int D, cudaStream_t stream);
// The inverse: dy (B, T, H, D) -> do (B, H, T, D).
void rows_to_heads(__nv_bfloat16* o, const __nv_bfloat16* y, int B, int T, int H, int D, cudaStream_t stream);
// out[i] = bf16(in[i]) (round to nearest even).
void float_to_bf16(__nv_bfloat16* out, const float* in, std::size_t n, cudaStream_t stream);
// out[i] = value.
void fill_bf16(__nv_bfloat16* out, float value, std::size_t n, cudaStream_t stream);

}  // namespace trainsim::trainer
