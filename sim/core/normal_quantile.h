#pragma once
// Quantiles of the standard normal distribution and of the largest of n draws
// from it (docs/model.md, "Step-time variability").

namespace trainsim::core {

// Phi^-1(p) for 0 < p < 1: Wichura's algorithm AS 241 (PPND16, Applied
// Statistics 37(3), 1988), about 16 significant digits.
[[nodiscard]] double normal_quantile(double p);

// The q-quantile of the largest of n independent standard normal draws,
// Phi^-1(q^(1/n)) (its CDF is Phi(x)^n), computed from the upper tail
// 1 - q^(1/n) = -expm1(ln q / n) so that large n keeps its digits. 0 < q < 1, n >= 1.
[[nodiscard]] double max_normal_quantile(double q, double n);

}  // namespace trainsim::core
