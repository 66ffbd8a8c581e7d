#pragma once
// CPU references for the elementwise and normalization kernels (kernels/src/embedding.cu,
// layernorm.cu, gelu.cu, residual.cu, softmax_cross_entropy.cu, adamw.cu), and the fewest
// HBM bytes each GPU kernel moves.
//
// The references take float tensors (the GPU tests round their bf16 inputs to float first,
// so both sides see the same numbers) and accumulate in double. Shapes follow the GPU API
// in trainsim/kernels/elementwise.h; a span whose size does not match the shape throws
// std::invalid_argument.
//
// Byte counts: each input read once, each output written once, an accumulated (+=) output
// read and written once; scratch workspaces are not counted. The calibration harness
// divides these by the measured time to report bandwidth (docs/calibration.md, "kernels").
#include <cstddef>
#include <span>

namespace trainsim::kernels::ref {

// ---- embedding ------------------------------------------------------------------------
// out[b,t,:] = wte[tokens[b,t],:] + wpe[t,:]; wpe may be empty (no position embedding).
void embedding_forward(std::span<float> out,         // (B, T, C)
                       std::span<const int> tokens,  // (B, T), each in [0, V)
                       std::span<const float> wte,   // (V, C)
                       std::span<const float> wpe,   // (T, C) or empty
                       int B, int T, int C, int V);

// dwte[tokens[b,t],:] += dout[b,t,:]; dwpe[t,:] += sum_b dout[b,t,:] (dwpe may be empty).
void embedding_backward(std::span<float> dwte,        // (V, C), accumulated
                        std::span<float> dwpe,        // (T, C), accumulated, or empty
                        std::span<const float> dout,  // (B, T, C)
                        std::span<const int> tokens,  // (B, T), each in [0, V)
                        int B, int T, int C, int V);

// ---- layernorm ------------------------------------------------------------------------
inline constexpr float kLayerNormEps = 1e-5f;  // GPT-2's (and PyTorch's default) epsilon

// out = (inp - mean) * rstd * weight + bias per row, rstd = 1 / sqrt(var + eps) with the
// biased variance (divide by cols), as torch.nn.LayerNorm.
void layernorm_forward(std::span<float> out,           // (rows, cols)
                       std::span<float> mean,          // (rows)
                       std::span<float> rstd,          // (rows)
                       std::span<const float> inp,     // (rows, cols)
                       std::span<const float> weight,  // (cols)
                       std::span<const float> bias,    // (cols)
                       int rows, int cols);

// dinp is overwritten; dweight and dbias are accumulated (+=). mean and rstd are the
// forward's.
void layernorm_backward(std::span<float> dinp,          // (rows, cols)
                        std::span<float> dweight,       // (cols), accumulated
                        std::span<float> dbias,         // (cols), accumulated
                        std::span<const float> dout,    // (rows, cols)
                        std::span<const float> inp,     // (rows, cols)
                        std::span<const float> weight,  // (cols)
                        std::span<const float> mean,    // (rows)
                        std::span<const float> rstd,    // (rows)
                        int rows, int cols);

// ---- GELU (tanh approximation, as GPT-2) ----------------------------------------------
// gelu(x) = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))  (Hendrycks & Gimpel 2016)
[[nodiscard]] double gelu(double x);
[[nodiscard]] double gelu_derivative(double x);
void gelu_forward(std::span<float> out, std::span<const float> inp);
// dinp = dout * gelu'(inp)
void gelu_backward(std::span<float> dinp, std::span<const float> inp, std::span<const float> dout);

// ---- residual -------------------------------------------------------------------------
void residual_forward(std::span<float> out, std::span<const float> a, std::span<const float> b);

// ---- fused softmax + cross-entropy ----------------------------------------------------
// Per row n: losses[n] = logsumexp(logits[n, 0:V]) - logits[n, targets[n]];
// dlogits[n, i] = (softmax(logits[n, 0:V])_i - [i == targets[n]]) * dloss_scale for i < V,
// and 0 in the padding columns V <= i < Vp. Rows are Vp apart (Vp >= V).
void softmax_cross_entropy(std::span<float> losses,        // (rows)
                           std::span<float> dlogits,       // (rows, Vp)
                           std::span<const float> logits,  // (rows, Vp), columns >= V unread
                           std::span<const int> targets,   // (rows), each in [0, V)
                           int rows, int V, int Vp, float dloss_scale);

// ---- AdamW ----------------------------------------------------------------------------
// One step of torch.optim.AdamW (step t >= 1):
//   p -= lr * weight_decay * p
//   m = beta1 m + (1 - beta1) g;  v = beta2 v + (1 - beta2) g^2
//   p -= lr * (m / (1 - beta1^t)) / (sqrt(v / (1 - beta2^t)) + eps)
// params, m and v are updated in place.
void adamw_step(std::span<float> params, std::span<float> m, std::span<float> v, std::span<const float> grads, float lr,
                float beta1, float beta2, float eps, float weight_decay, int step);

// ---- fewest HBM bytes each GPU kernel moves -------------------------------------------
// embedding_forward: tokens, the B*T gathered wte rows, wpe once (when used), out.
[[nodiscard]] std::size_t embedding_forward_bytes(int B, int T, int C, bool with_wpe);
// embedding_backward: dout, tokens, min(B*T, V) dwte rows read and written (exact when the
// tokens are distinct), dwpe read and written (when used).
[[nodiscard]] std::size_t embedding_backward_bytes(int B, int T, int C, int V, bool with_wpe);
// layernorm_forward: inp, weight, bias; out, mean, rstd.
[[nodiscard]] std::size_t layernorm_forward_bytes(int rows, int cols);
// layernorm_backward: dout, inp, weight, mean, rstd; dinp; dweight, dbias read and written.
[[nodiscard]] std::size_t layernorm_backward_bytes(int rows, int cols);
// gelu_forward: inp; out.   gelu_backward: inp, dout; dinp.
[[nodiscard]] std::size_t gelu_forward_bytes(std::size_t n);
[[nodiscard]] std::size_t gelu_backward_bytes(std::size_t n);
// residual_forward: a, b; out.
[[nodiscard]] std::size_t residual_forward_bytes(std::size_t n);
// softmax_cross_entropy: the V real logits of each row, targets; losses, the Vp-wide dlogits.
[[nodiscard]] std::size_t softmax_cross_entropy_bytes(int rows, int V, int Vp);
// adamw: params, grads, m, v read; params, m, v and the bf16 copy written (30 bytes/param).
[[nodiscard]] std::size_t adamw_bytes(std::size_t n);

}  // namespace trainsim::kernels::ref
