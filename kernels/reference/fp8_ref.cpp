#include "fp8_ref.h"

#include <cmath>
#include <stdexcept>
#include <string>

namespace trainsim::kernels::ref {

namespace {

struct Layout {
  int mantissa_bits;
  int bias;
  int min_normal_exponent;  // 1 - bias
  double max_finite;
  std::uint8_t max_code;  // largest finite magnitude's bits
  std::uint8_t nan_code;
};

Layout layout(Fp8 f) {
  return f == Fp8::kE4M3 ? Layout{3, 7, -6, 448.0, 0x7E, 0x7F} : Layout{2, 15, -14, 57344.0, 0x7B, 0x7F};
}

}  // namespace

float fp8_max(Fp8 format) { return static_cast<float>(layout(format).max_finite); }

std::uint8_t fp8_encode(float x, Fp8 format) {
  const Layout l = layout(format);
  const std::uint8_t sign = std::signbit(x) ? 0x80 : 0x00;
  if (std::isnan(x)) return static_cast<std::uint8_t>(sign | l.nan_code);
  const double a = std::fabs(static_cast<double>(x));
  if (a >= l.max_finite) return static_cast<std::uint8_t>(sign | l.max_code);
  // The spacing of representable values around a: 2^(e - m) in binade [2^e, 2^(e+1)),
  // 2^(emin - m) below the smallest normal. a / q is exact (q is a power of two), so
  // nearbyint rounds once, to nearest even (the default rounding mode).
  int e = l.min_normal_exponent;
  if (a >= std::ldexp(1.0, l.min_normal_exponent)) e = std::ilogb(a);
  const double q = std::ldexp(1.0, e - l.mantissa_bits);
  const double r = std::nearbyint(a / q) * q;
  if (r >= l.max_finite) return static_cast<std::uint8_t>(sign | l.max_code);
  if (r == 0.0) return sign;
  if (r < std::ldexp(1.0, l.min_normal_exponent)) {  // subnormal: exponent field 0
    const auto mant = static_cast<unsigned>(r / std::ldexp(1.0, l.min_normal_exponent - l.mantissa_bits));
    return static_cast<std::uint8_t>(sign | mant);
  }
  const int er = std::ilogb(r);  // rounding may have carried into the next binade
  const auto mant = static_cast<unsigned>((r / std::ldexp(1.0, er) - 1.0) * (1 << l.mantissa_bits));
  const auto field = static_cast<unsigned>(er + l.bias);
  return static_cast<std::uint8_t>(sign | (field << l.mantissa_bits) | mant);
}

float fp8_decode(std::uint8_t bits, Fp8 format) {
  const Layout l = layout(format);
  const bool negative = (bits & 0x80) != 0;
  const unsigned magnitude = bits & 0x7Fu;
  const unsigned field = magnitude >> l.mantissa_bits;
  const unsigned mant = magnitude & ((1u << l.mantissa_bits) - 1u);
  double v = 0.0;
  if (format == Fp8::kE4M3 && magnitude == 0x7F) v = std::nan("");
  else if (format == Fp8::kE5M2 && field == 31) v = mant == 0 ? HUGE_VAL : std::nan("");
  else if (field == 0) v = std::ldexp(static_cast<double>(mant), l.min_normal_exponent - l.mantissa_bits);
  else v = std::ldexp(1.0 + static_cast<double>(mant) / (1 << l.mantissa_bits), static_cast<int>(field) - l.bias);
  return static_cast<float>(negative ? -v : v);
}

float fp8_cast(std::span<std::uint8_t> out, std::span<const float> in, float scale, Fp8 format) {
  if (out.size() != in.size())
    throw std::invalid_argument("fp8_cast: out has " + std::to_string(out.size()) + " elements, in " +
                                std::to_string(in.size()));
  float amax = 0.0F;
  for (std::size_t i = 0; i < in.size(); ++i) {
    out[i] = fp8_encode(in[i] * scale, format);
    if (!std::isnan(in[i])) amax = std::fmax(amax, std::fabs(in[i]));
  }
  return amax;
}

std::size_t fp8_cast_bytes(std::size_t n) { return 3 * n; }
std::size_t fp8_cast_transpose_bytes(std::size_t n) { return 4 * n; }

}  // namespace trainsim::kernels::ref
