#include "timing_stats.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace trainsim::calibrate {

Timing summarize(std::vector<double> samples) {
  if (samples.empty()) throw std::invalid_argument("no timed repetitions to summarize");
  std::sort(samples.begin(), samples.end());
  const std::size_t n = samples.size();
  // Type-7 quantile: h = (n - 1) q, between order statistics floor(h) and floor(h) + 1.
  auto quantile = [&](double q) {
    const double h = static_cast<double>(n - 1) * q;
    const auto lo = static_cast<std::size_t>(h);
    const std::size_t hi = std::min(lo + 1, n - 1);
    return samples[lo] + (h - static_cast<double>(lo)) * (samples[hi] - samples[lo]);
  };
  Timing t;
  t.median_s = quantile(0.5);
  t.min_s = samples.front();
  t.p10_s = quantile(0.10);
  t.p25_s = quantile(0.25);
  t.p75_s = quantile(0.75);
  t.p90_s = quantile(0.90);
  t.max_s = samples.back();
  double sum = 0.0;
  for (double x : samples) sum += x;
  t.mean_s = sum / static_cast<double>(n);
  double ss = 0.0;
  for (double x : samples) ss += (x - t.mean_s) * (x - t.mean_s);
  t.stddev_s = n > 1 ? std::sqrt(ss / static_cast<double>(n - 1)) : 0.0;
  t.repeats = static_cast<int>(n);
  return t;
}

nlohmann::json distribution_json(const Timing& t) {
  return {{"min", t.min_s}, {"p10", t.p10_s},   {"p25", t.p25_s},  {"p75", t.p75_s},
          {"p90", t.p90_s}, {"max", t.max_s}, {"mean", t.mean_s}, {"stddev", t.stddev_s}};
}

}  // namespace trainsim::calibrate
