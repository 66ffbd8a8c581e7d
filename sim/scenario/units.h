#pragma once
// Quantities with units: "400Gbps", "900GB/s", "2us", "30min", "50000h", "80GiB",
// "989TFLOP/s", "700W", "15T" (a count). Plain numbers are SI (s, B, B/s, FLOP/s, W).
#include <stdexcept>
#include <string>
#include <string_view>

namespace trainsim::scenario {

enum class Dimension { kTime, kBytes, kBandwidth, kFlopRate, kPower, kCount };

// "a duration", "a size in bytes", ... for messages.
std::string_view describe(Dimension d);
// An example of a valid value, e.g. "\"2us\", \"30min\" or seconds as a number".
std::string_view example(Dimension d);

class UnitError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// Parses a number followed by an optional unit suffix (no space needed, one space
// allowed). Returns the value in SI base units: seconds, bytes, bytes/s, FLOP/s,
// watts, or a plain count. Throws UnitError naming what was expected (with the
// accepted units and a did-you-mean for near misses) for unknown units, a
// missing number, or a non-finite value.
double parse_quantity(std::string_view text, Dimension dim);

}  // namespace trainsim::scenario
