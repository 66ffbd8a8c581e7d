#pragma once
// Elementwise and normalization kernels of a GPT-2 style trainer: embedding, layernorm,
// GELU, residual add, fused softmax + cross-entropy, AdamW. One family per file in
// kernels/src; CPU references and byte counts in kernels/reference/elementwise_ref.h.
//
// Conventions (as llm.c): activations and compute copies of weights are bf16, arithmetic
// and parameter gradients fp32. Pointers are device pointers; shapes are in the trailing
// comments. Every launcher is asynchronous on `stream`, throws std::invalid_argument for a
// null pointer, a non-positive size or an unsupported layout (before launching anything),
// and CudaError (cuda_check.h) when the launch fails.
//
// Layout requirements: rows of C channels (embedding, layernorm) need C % 8 == 0 and
// 16-byte aligned tensors (whole rows are moved as 16-byte vectors; cudaMalloc'd buffers
// and offsets that are multiples of 8 elements qualify). The flat kernels (GELU, residual,
// AdamW) and softmax_cross_entropy take any size and alignment and use 16-byte vectors
// when the pointers allow.
//
// Determinism: every kernel here gives bitwise identical results for identical inputs
// (no floating-point atomics); the backward passes that reduce over rows use a caller-owned
// workspace for that (llm.c's "scratch"), sized by the *_workspace_bytes functions.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstddef>

namespace trainsim::kernels {

// ---- embedding (kernels/src/embedding.cu) ---------------------------------------------
// out[b,t,:] = wte[tokens[b,t],:] + wpe[t,:]. wpe may be nullptr (no position embedding).
// A token outside [0, V) makes its output row NaN (a device kernel cannot throw).
void embedding_forward(__nv_bfloat16* out,        // (B, T, C)
                       const int* tokens,         // (B, T)
                       const __nv_bfloat16* wte,  // (V, C)
                       const __nv_bfloat16* wpe,  // (T, C) or nullptr
                       int B, int T, int C, int V, cudaStream_t stream);

// Workspace for embedding_backward: the positions sorted by token (CUB radix sort) so each
// dwte row is summed by one block in position order. Queries CUB, so it needs a device.
[[nodiscard]] std::size_t embedding_backward_workspace_bytes(int B, int T, int V);

// dwte[tokens[b,t],:] += dout[b,t,:] (fp32 sums in position order, deterministic);
// dwpe[t,:] += sum_b dout[b,t,:] when dwpe is not nullptr. Tokens outside [0, V) are skipped.
void embedding_backward(float* dwte,                // (V, C), accumulated
                        float* dwpe,                // (T, C), accumulated, or nullptr
                        const __nv_bfloat16* dout,  // (B, T, C)
                        const int* tokens,          // (B, T)
                        void* workspace,            // embedding_backward_workspace_bytes(B, T, V)
                        std::size_t workspace_bytes, int B, int T, int C, int V, cudaStream_t stream);

// ---- layernorm (kernels/src/layernorm.cu), eps = 1e-5 ---------------------------------
// One warp per row; biased variance, as torch.nn.LayerNorm.
void layernorm_forward(__nv_bfloat16* out,           // (rows, cols)
                       float* mean,                  // (rows)
                       float* rstd,                  // (rows)
                       const __nv_bfloat16* inp,     // (rows, cols)
                       const __nv_bfloat16* weight,  // (cols)
                       const __nv_bfloat16* bias,    // (cols)
                       int rows, int cols, cudaStream_t stream);

// Workspace for layernorm_backward: per-row-chunk partial sums of dweight and dbias, reduced
// in a fixed order afterwards. Pure arithmetic (no device needed).
[[nodiscard]] std::size_t layernorm_backward_workspace_bytes(int rows, int cols);

// dinp is overwritten (add a residual gradient with residual_forward); dweight and dbias
// are accumulated (+=). mean and rstd are layernorm_forward's.
void layernorm_backward(__nv_bfloat16* dinp,          // (rows, cols)
                        float* dweight,               // (cols), accumulated
                        float* dbias,                 // (cols), accumulated
                        const __nv_bfloat16* dout,    // (rows, cols)
                        const __nv_bfloat16* inp,     // (rows, cols)
                        const __nv_bfloat16* weight,  // (cols)
                        const float* mean,            // (rows)
                        const float* rstd,            // (rows)
                        void* workspace,              // layernorm_backward_workspace_bytes(rows, cols)
                        std::size_t workspace_bytes, int rows, int cols, cudaStream_t stream);

// ---- GELU, tanh approximation (kernels/src/gelu.cu) -----------------------------------
// out = gelu(inp); may run in place (out == inp).
void gelu_forward(__nv_bfloat16* out,        // (n)
                  const __nv_bfloat16* inp,  // (n)
                  std::size_t n, cudaStream_t stream);
// dinp = dout * gelu'(inp); may run in place (dinp == dout).
void gelu_backward(__nv_bfloat16* dinp,        // (n)
                   const __nv_bfloat16* inp,   // (n)
                   const __nv_bfloat16* dout,  // (n)
                   std::size_t n, cudaStream_t stream);

// ---- residual (kernels/src/residual.cu) -----------------------------------------------
// out = a + b (fp32 add, one rounding); out may alias a or b.
void residual_forward(__nv_bfloat16* out,      // (n)
                      const __nv_bfloat16* a,  // (n)
                      const __nv_bfloat16* b,  // (n)
                      std::size_t n, cudaStream_t stream);

// ---- fused softmax + cross-entropy (kernels/src/softmax_cross_entropy.cu) -------------
// One block per row of V logits, rows Vp >= V elements apart:
//   losses[n] = logsumexp(logits[n, 0:V]) - logits[n, targets[n]]
//   dlogits[n, i] = (softmax_i - [i == targets[n]]) * dloss_scale  for i < V, 0 for V <= i < Vp
// dlogits may alias logits (in place). A target outside [0, V) gives a NaN loss and no
// one-hot term. 16-byte vectors when Vp % 8 == 0 and both tensors are 16-byte aligned.
void softmax_cross_entropy(float* losses,                // (rows)
                           __nv_bfloat16* dlogits,       // (rows, Vp)
                           const __nv_bfloat16* logits,  // (rows, Vp)
                           const int* targets,           // (rows)
                           int rows, int V, int Vp, float dloss_scale, cudaStream_t stream);

// ---- AdamW (kernels/src/adamw.cu) -----------------------------------------------------
// One step of torch.optim.AdamW on fp32 master weights (step >= 1, bias-corrected):
//   p -= lr * weight_decay * p
//   m = beta1 m + (1 - beta1) g;  v = beta2 v + (1 - beta2) g^2
//   p -= lr * (m / (1 - beta1^step)) / (sqrt(v / (1 - beta2^step)) + eps)
// and params_bf16 = bf16(p) (round to nearest even), the compute copy.
void adamw_step(float* params,               // (n), fp32 master, updated
                __nv_bfloat16* params_bf16,  // (n), written
                float* m,                    // (n), updated
                float* v,                    // (n), updated
                const float* grads,          // (n)
                std::size_t n, float lr, float beta1, float beta2, float eps, float weight_decay, int step,
                cudaStream_t stream);

}  // namespace trainsim::kernels
