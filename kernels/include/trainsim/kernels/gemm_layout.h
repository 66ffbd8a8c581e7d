#pragma once
// The GEMM wrapper's operand layouts (gemm.h), without CUDA, for the harness's CPU
// part (shape lists) as well as the wrapper. Row-major C[m x n], reduction over k:
//   forward          C = A W^T, A stored [m x k], W stored [n x k]  (cuBLAS "TN")
//   data_gradient    C = A B,   A stored [m x k], B stored [k x n]  (cuBLAS "NN")
//   weight_gradient  C = A^T B, A stored [k x m], B stored [k x n]  (cuBLAS "NT")
// For a linear layer Y[M x N] = X W^T with W [N x K]: the forward GEMM is (M, N, K),
// the data gradient dX = dY W is data_gradient (M, K, N), the weight gradient
// dW = dY^T X is weight_gradient (N, K, M).
#include <array>
#include <stdexcept>
#include <string>

namespace trainsim::kernels {

enum class GemmLayout { kForward, kDataGradient, kWeightGradient };

inline constexpr std::array<GemmLayout, 3> kGemmLayouts{GemmLayout::kForward, GemmLayout::kDataGradient,
                                                        GemmLayout::kWeightGradient};

// "forward", "data_gradient", "weight_gradient" (the profile's "layout" values).
[[nodiscard]] constexpr const char* to_string(GemmLayout layout) {
  switch (layout) {
    case GemmLayout::kForward: return "forward";
    case GemmLayout::kDataGradient: return "data_gradient";
    case GemmLayout::kWeightGradient: return "weight_gradient";
  }
  return "?";
}

// Throws std::invalid_argument for another name.
[[nodiscard]] inline GemmLayout parse_gemm_layout(const std::string& name) {
  for (GemmLayout l : kGemmLayouts)
    if (name == to_string(l)) return l;
  throw std::invalid_argument("unknown GEMM layout '" + name +
                              "' (expected forward, data_gradient or weight_gradient)");
}

}  // namespace trainsim::kernels
