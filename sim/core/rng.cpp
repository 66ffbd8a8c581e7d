#include "core/rng.h"

#include <bit>
#include <cmath>
#include <stdexcept>
#include <string>

namespace trainsim::core {

namespace {

// 2^64 / golden ratio, the increment of splitmix64 (Steele, Lea & Flood,
// "Fast splittable pseudorandom number generators", OOPSLA 2014).
constexpr std::uint64_t kGolden = 0x9e3779b97f4a7c15ULL;

// The splitmix64 output function (Vigna's reference splitmix64.c,
// https://prng.di.unimi.it/splitmix64.c): a bijective 64-bit mixer.
constexpr std::uint64_t mix64(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// One step of splitmix64: advances `state` and returns the next output.
constexpr std::uint64_t splitmix64_next(std::uint64_t& state) {
  state += kGolden;
  return mix64(state);
}

void require_positive_finite(double value, const char* what) {
  // Written as !(value > 0) so that NaN is rejected too.
  if (!(value > 0.0) || !std::isfinite(value)) {
    throw std::invalid_argument(std::string("Rng: ") + what + " must be positive and finite");
  }
}

}  // namespace

Rng::Rng(std::uint64_t seed) : seed_(seed) {
  // Seeding recommended by the xoshiro authors (https://prng.di.unimi.it/):
  // fill the state with splitmix64 outputs. splitmix64's output function is a
  // bijection, so at most one of four consecutive outputs is zero and the
  // all-zero state (a fixed point of xoshiro) cannot occur.
  std::uint64_t sm = seed;
  for (auto& word : s_) word = splitmix64_next(sm);
}

std::uint64_t Rng::next_u64() {
  // xoshiro256** 1.0, transcribed from Blackman & Vigna's reference
  // xoshiro256starstar.c ("Scrambled linear pseudorandom number generators",
  // ACM TOMS 47(4), 2021; preprint 2018).
  const std::uint64_t result = std::rotl(s_[1] * 5, 7) * 9;
  const std::uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = std::rotl(s_[3], 45);
  return result;
}

double Rng::uniform() {
  // The top 53 bits scaled by 2^-53: every value is a multiple of 2^-53 in
  // [0, 1) and the conversion is exact (Vigna, "Generating uniform doubles in
  // the unit interval", https://prng.di.unimi.it/#remarks).
  return static_cast<double>(next_u64() >> 11) * 0x1.0p-53;
}

double Rng::uniform(double lo, double hi) {
  if (!std::isfinite(lo) || !std::isfinite(hi) || !(lo < hi) || !std::isfinite(hi - lo)) {
    throw std::invalid_argument("Rng::uniform: need finite lo < hi with finite hi - lo");
  }
  const double x = lo + (hi - lo) * uniform();
  // lo + (hi - lo) * u can round up to hi when u is close to 1; keep the
  // interval half-open as documented.
  return x < hi ? x : std::nextafter(hi, lo);
}

std::uint64_t Rng::below(std::uint64_t n) {
  if (n == 0) throw std::invalid_argument("Rng::below: n must be positive");
  // Rejection sampling (as in OpenBSD's arc4random_uniform): 2^64 mod n values
  // at the bottom of the range would make x % n biased towards small results;
  // rejecting them leaves a multiple of n equally likely values. (0 - n) % n
  // is 2^64 mod n computed in 64 bits. At most one draw in two is rejected
  // (when n is just above 2^63); for small n rejection is vanishingly rare.
  // Chosen over Lemire's multiply-shift because it needs no 128-bit integer,
  // which ISO C++ does not have.
  const std::uint64_t threshold = (0 - n) % n;
  for (;;) {
    const std::uint64_t x = next_u64();
    if (x >= threshold) return x % n;
  }
}

double Rng::exponential(double mean) {
  require_positive_finite(mean, "exponential mean");
  // Inversion: if U ~ U[0,1), -ln(1 - U) ~ Exp(1). log1p(-u) is accurate for
  // small u and finite because u < 1.
  return -mean * std::log1p(-uniform());
}

double Rng::weibull(double scale, double shape) {
  require_positive_finite(scale, "weibull scale");
  require_positive_finite(shape, "weibull shape");
  // Inversion of F(x) = 1 - exp(-(x/scale)^shape).
  return scale * std::pow(-std::log1p(-uniform()), 1.0 / shape);
}

Rng Rng::split(std::uint64_t stream) const {
  // Mix the stream index on its own before combining it with the seed, so that
  // (seed, stream) pairs that differ in a simple pattern (seed ^ k*golden vs
  // stream k) do not collide, then mix again so that neighbouring streams get
  // unrelated seeds. The result depends only on seed_ and stream, never on how
  // many numbers this generator has drawn.
  return Rng(mix64(seed_ ^ mix64(stream + kGolden)));
}

}  // namespace trainsim::core
