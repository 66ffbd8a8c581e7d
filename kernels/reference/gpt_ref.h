#pragma once
// CPU fp64 reference of the whole GPT-2-style model trainsim-train trains (no CUDA):
// token + position embedding, L pre-LN blocks (causal multi-head attention, tanh-GELU
// MLP, residual adds), final layernorm, LM head tied to wte, mean cross-entropy over the
// real vocabulary. Forward and backward accumulate in double; the attention core and the
// GELU are the per-kernel references (attention_ref.h, elementwise_ref.h). Parameters are
// one flat array in gpt_layout.h's order.
//
// Block l (x: (N, C) residual stream, N = B T):
//   a = LN1(x);  qkv = a Wqkv^T + bqkv;  y = attention(q, k, v);  x2 = x + y Wproj^T + bproj
//   m = LN2(x2); h = gelu(m Wfc^T + bfc);  x3 = x2 + h Wfcproj^T + bfcproj
// Head: logits = LNf(x) wte^T (N, Vp); loss = mean_n [logsumexp(logits[n, :V]) - logits[n, target]].
// q, k, v are the column thirds of qkv, head h at columns h D .. h D + D - 1 of each.
#include <span>
#include <vector>

#include "gpt_layout.h"

namespace trainsim::kernels::ref {

struct GptRefResult {
  double loss = 0.0;           // mean over the B T positions
  std::vector<double> grads;   // d loss / d params (flat, as params); empty without backward
};

// tokens and targets: (B, T) with T = cfg.seq, each in [0, V). Throws std::invalid_argument
// on a span of the wrong size or a token out of range.
GptRefResult gpt_forward_backward(const GptConfig& cfg, std::span<const double> params, std::span<const int> tokens,
                                  std::span<const int> targets, int batch, bool backward);

}  // namespace trainsim::kernels::ref
