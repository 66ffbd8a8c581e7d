#include "core/time.h"

#include <cmath>
#include <sstream>
#include <stdexcept>
#include <string>

namespace trainsim::core {

namespace {

// 2^63 as a double. It is exactly representable, and it is also what
// static_cast<double>(INT64_MAX) rounds to, so comparing against it (>=) rather
// than against INT64_MAX avoids the off-by-one of an inexact conversion: the
// largest double below 2^63 is 2^63 - 1024, so every accepted value still fits
// in int64_t after rounding.
constexpr double kTwoPow63 = 9223372036854775808.0;

// std::to_string(double) prints "%f", which shows -1e-12 as "-0.000000";
// 17 significant digits always show what a user needs to find the bad value.
std::string describe(double seconds) {
  std::ostringstream out;
  out.precision(17);
  out << seconds;
  return out.str();
}

}  // namespace

Time from_seconds(double seconds) {
  // !(x >= 0) also rejects NaN, which compares false with everything.
  if (!(seconds >= 0.0)) {
    throw std::domain_error("from_seconds: duration must be a non-negative number, got " +
                            describe(seconds) + " s");
  }
  if (!std::isfinite(seconds)) {
    throw std::domain_error("from_seconds: duration must be finite");
  }
  const double ns = seconds * 1e9;
  if (ns >= kTwoPow63) {
    throw std::domain_error("from_seconds: " + describe(seconds) +
                            " s does not fit in 64-bit nanoseconds (max ~292 years)");
  }
  // llround rounds halfway cases away from zero and does not depend on the
  // current floating-point rounding mode (unlike nearbyint/llrint), so the
  // result is the same on every platform.
  return static_cast<Time>(std::llround(ns));
}

double to_seconds(Time t) {
  // Divide rather than multiply by 1e-9: 1e9 is exact in binary, so the
  // division is a single correctly rounded operation, whereas 1e-9 is already
  // inexact before the multiplication. This keeps to_seconds(kMillisecond) ==
  // 0.001 exactly and makes from_seconds(to_seconds(t)) == t for |t| < 2^51.
  return static_cast<double>(t) / 1e9;
}

}  // namespace trainsim::core
