#pragma once
// Causal scaled-dot-product attention, tiled flash-style (FlashAttention-2, Dao 2023)
// on bf16 tensor cores: 64-query x 64-key tiles in shared memory, online softmax in
// fp32, fully masked key tiles skipped. CPU reference: kernels/reference/attention_ref.h.
//
// Every tensor is a dense bf16 [B, H, T, D] array (the one layout; no strides):
//   q, k, v, o, dout, dq, dk, dv  // (B, H, T, D)
//   lse                           // (B, H, T) fp32: ln sum_{u<=t} exp(q_t . k_u / sqrt(D))
// D (head_dim) is 64 or 128; T is any positive length. Pointers must be 16-byte
// aligned (cudaMalloc gives 256). Launches go on `stream`; nothing synchronizes.
// Invalid arguments throw std::invalid_argument before anything is launched; a
// failed launch throws trainsim::kernels::CudaError.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstddef>

namespace trainsim::kernels {

struct AttentionShape {
  int batch = 0;
  int heads = 0;
  int seq = 0;       // T
  int head_dim = 0;  // D: 64 or 128
};

// Throws std::invalid_argument unless the kernels support `shape`.
void check_attention_shape(AttentionShape shape);

// o = softmax(q k^T / sqrt(D) + causal mask) v, and its log-sum-exp per row.
void attention_forward(const __nv_bfloat16* q, const __nv_bfloat16* k, const __nv_bfloat16* v, __nv_bfloat16* o,
                       float* lse, AttentionShape shape, cudaStream_t stream);

// Device scratch the backward needs: delta = rowsum(dout * o) (B, H, T) and the fp32
// dq accumulator (B, H, T, D), each 256-byte aligned.
std::size_t attention_backward_workspace_bytes(AttentionShape shape);

// dq, dk, dv from the forward's o and lse and the output gradient dout. `workspace`
// holds at least attention_backward_workspace_bytes(shape) bytes of device memory
// (no initial contents needed); q, k, v, o, dout, lse are left unchanged.
void attention_backward(const __nv_bfloat16* q, const __nv_bfloat16* k, const __nv_bfloat16* v, const __nv_bfloat16* o,
                        const __nv_bfloat16* dout, const float* lse, __nv_bfloat16* dq, __nv_bfloat16* dk,
                        __nv_bfloat16* dv, void* workspace, AttentionShape shape, cudaStream_t stream);

}  // namespace trainsim::kernels
