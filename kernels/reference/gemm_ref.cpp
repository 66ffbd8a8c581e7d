#include "gemm_ref.h"

#include <cmath>
#include <cstddef>
#include <numbers>
#include <stdexcept>

namespace trainsim::kernels::ref {

namespace {
double gelu_tanh(double x) {
  const double c = std::sqrt(2.0 / std::numbers::pi);
  return 0.5 * x * (1.0 + std::tanh(c * (x + 0.044715 * x * x * x)));
}
}  // namespace

std::vector<double> linear(int m, int n, int k, const std::vector<float>& a, const std::vector<float>& w,
                           const std::vector<float>& bias, bool gelu) {
  if (m <= 0 || n <= 0 || k <= 0) throw std::invalid_argument("linear: sizes must be positive");
  const auto um = static_cast<std::size_t>(m), un = static_cast<std::size_t>(n), uk = static_cast<std::size_t>(k);
  if (a.size() != um * uk || w.size() != un * uk || (!bias.empty() && bias.size() != un))
    throw std::invalid_argument("linear: operand sizes do not match m, n, k");
  std::vector<double> c(um * un);
  for (std::size_t i = 0; i < um; ++i)
    for (std::size_t j = 0; j < un; ++j) {
      double acc = bias.empty() ? 0.0 : static_cast<double>(bias[j]);
      for (std::size_t p = 0; p < uk; ++p) acc += static_cast<double>(a[i * uk + p]) * static_cast<double>(w[j * uk + p]);
      c[i * un + j] = gelu ? gelu_tanh(acc) : acc;
    }
  return c;
}

double gemm_flops(double m, double n, double k) { return 2.0 * m * n * k; }

}  // namespace trainsim::kernels::ref
