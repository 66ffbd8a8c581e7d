#pragma once
// Seeded random numbers, passed explicitly to whoever needs them (never global).
// xoshiro256** seeded through splitmix64 (Blackman & Vigna, 2018), with our own
// distributions so results are identical across standard libraries.
#include <array>
#include <cstdint>

namespace trainsim::core {

class Rng {
 public:
  explicit Rng(std::uint64_t seed);
  std::uint64_t next_u64();
  double uniform();                      // [0, 1), 53 random bits
  double uniform(double lo, double hi);  // [lo, hi)
  std::uint64_t below(std::uint64_t n);  // [0, n), unbiased; precondition n > 0
  double exponential(double mean);       // mean > 0
  double weibull(double scale, double shape);
  // An independent generator for sub-stream `stream` (e.g. one per Monte Carlo
  // trial), derived deterministically from this generator's seed.
  [[nodiscard]] Rng split(std::uint64_t stream) const;

 private:
  std::uint64_t seed_;
  std::array<std::uint64_t, 4> s_{};
};

}  // namespace trainsim::core
