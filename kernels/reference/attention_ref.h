#pragma once
// CPU reference of causal scaled-dot-product attention (no CUDA): the GPU tests
// check the flash kernels (kernels/src/attention_*.cu) against it. Every tensor is
// a dense [B, H, T, D] array; scores scale by 1/sqrt(D); query t sees keys 0..t.
// All sums accumulate in double. The float overloads convert in and out; the
// double overloads are there for finite-difference checks of the backward.
#include <span>
#include <vector>

namespace trainsim::kernels::ref {

struct AttentionShape {
  int batch = 0;
  int heads = 0;
  int seq = 0;       // T
  int head_dim = 0;  // D
};

template <typename T>
struct AttentionForwardResult {
  std::vector<T> o;    // (B, H, T, D)
  std::vector<T> lse;  // (B, H, T): ln sum_{u<=t} exp(q_t . k_u / sqrt(D))
};

template <typename T>
struct AttentionBackwardResult {
  std::vector<T> dq;  // (B, H, T, D)
  std::vector<T> dk;  // (B, H, T, D)
  std::vector<T> dv;  // (B, H, T, D)
};

// Throws std::invalid_argument on a non-positive size or a span of the wrong length.
AttentionForwardResult<float> attention_forward(std::span<const float> q, std::span<const float> k,
                                                std::span<const float> v, AttentionShape shape);
AttentionForwardResult<double> attention_forward(std::span<const double> q, std::span<const double> k,
                                                 std::span<const double> v, AttentionShape shape);

// Gradients of a loss L given dout = dL/do; the softmax is recomputed in double.
AttentionBackwardResult<float> attention_backward(std::span<const float> q, std::span<const float> k,
                                                  std::span<const float> v, std::span<const float> dout,
                                                  AttentionShape shape);
AttentionBackwardResult<double> attention_backward(std::span<const double> q, std::span<const double> k,
                                                   std::span<const double> v, std::span<const double> dout,
                                                   AttentionShape shape);

// Matmul FLOPs as FlashAttention's benchmark counts them for causal attention:
// 4 B H T^2 D (QK^T and PV, 2 FLOPs per multiply-add) halved for the mask.
double attention_forward_flops(AttentionShape shape);
// The backward's five matmuls against the forward's two: 2.5x.
double attention_backward_flops(AttentionShape shape);

// Minimal HBM traffic: each input read once, each output written once; bf16
// tensors 2 bytes per element, lse fp32. Forward: q, k, v in; o, lse out.
double attention_forward_bytes(AttentionShape shape);
// Backward: q, k, v, o, dout, lse in; dq, dk, dv out.
double attention_backward_bytes(AttentionShape shape);

}  // namespace trainsim::kernels::ref
