#pragma once
// CPU reference of the GEMM wrapper (kernels/include/trainsim/kernels/gemm.h):
// C[m x n] = A[m x k] W^T (+ bias[n]) (then tanh-GELU), row-major, W stored [n x k],
// accumulated in double.
#include <vector>

namespace trainsim::kernels::ref {

[[nodiscard]] std::vector<double> linear(int m, int n, int k, const std::vector<float>& a,
                                         const std::vector<float>& w, const std::vector<float>& bias, bool gelu);

// 2 m n k: the FLOPs of one GEMM.
[[nodiscard]] double gemm_flops(double m, double n, double k);

}  // namespace trainsim::kernels::ref
