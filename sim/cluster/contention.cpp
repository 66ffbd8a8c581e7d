#include "cluster/contention.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace trainsim::cluster {

double expected_share(std::span<const double> neighbour_duties) {
  // P(N = n) by adding one neighbour at a time (the Poisson-binomial distribution).
  std::vector<double> p{1.0};
  for (double d : neighbour_duties) {
    const double q = std::clamp(d, 0.0, 1.0);
    std::vector<double> next(p.size() + 1, 0.0);
    for (std::size_t n = 0; n < p.size(); ++n) {
      next[n] += p[n] * (1.0 - q);
      next[n + 1] += p[n] * q;
    }
    p = std::move(next);
  }
  double share = 0.0;
  for (std::size_t n = 0; n < p.size(); ++n) share += p[n] / static_cast<double>(n + 1);
  return share;
}

double quantized_share(double share) {
  constexpr double kSteps = 32.0;
  return std::max(1.0, std::round(share * kSteps)) / kSteps;
}

}  // namespace trainsim::cluster
