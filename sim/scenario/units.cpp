#include "scenario/units.h"

#include <array>
#include <charconv>
#include <cmath>
#include <limits>
#include <optional>
#include <span>
#include <system_error>
#include <vector>

#include "scenario/did_you_mean.h"

namespace trainsim::scenario {
namespace {

// value_in_si = number * multiply / divide. Sub-unit factors are stored as exact
// divisors (1e6, not 1e-6, which no double holds exactly) so that "3us" parses
// to the same double as the literal 3e-6: one correctly rounded division.
struct Unit {
  std::string_view name;
  double multiply;
  double divide;
};

constexpr double kKi = 1024.0;

constexpr std::array kTimeUnits{
    Unit{"ps", 1, 1e12}, Unit{"ns", 1, 1e9}, Unit{"us", 1, 1e6},
    Unit{"\xC2\xB5s", 1, 1e6},  // "µs", UTF-8 encoded as in the JSON files
    Unit{"ms", 1, 1e3},  Unit{"s", 1, 1},    Unit{"min", 60, 1},
    Unit{"h", 3600, 1},  Unit{"d", 86400, 1},
};

constexpr std::array kByteUnits{
    Unit{"B", 1, 1},           Unit{"KB", 1e3, 1},         Unit{"MB", 1e6, 1},
    Unit{"GB", 1e9, 1},        Unit{"TB", 1e12, 1},        Unit{"PB", 1e15, 1},
    Unit{"KiB", kKi, 1},       Unit{"MiB", kKi * kKi, 1},  Unit{"GiB", kKi * kKi * kKi, 1},
    Unit{"TiB", kKi * kKi * kKi * kKi, 1},
};

// Link speeds are quoted in bits, memory bandwidth in bytes: both are accepted
// and "Gbps"/"Gb/s" (bits) differ from "GB/s" (bytes) only by case. The bit
// spellings "...bps" come before "...b/s" so that a near miss such as "Gbs"
// suggests the usual spelling.
constexpr std::array kBandwidthUnits{
    Unit{"B/s", 1, 1},         Unit{"KB/s", 1e3, 1},       Unit{"MB/s", 1e6, 1},
    Unit{"GB/s", 1e9, 1},      Unit{"TB/s", 1e12, 1},      Unit{"KiB/s", kKi, 1},
    Unit{"MiB/s", kKi * kKi, 1}, Unit{"GiB/s", kKi * kKi * kKi, 1},
    Unit{"bps", 1, 8},         Unit{"Kbps", 1e3, 8},       Unit{"Mbps", 1e6, 8},
    Unit{"Gbps", 1e9, 8},      Unit{"Tbps", 1e12, 8},      Unit{"Kb/s", 1e3, 8},
    Unit{"Mb/s", 1e6, 8},      Unit{"Gb/s", 1e9, 8},       Unit{"Tb/s", 1e12, 8},
};

constexpr std::array kFlopRateUnits{
    Unit{"FLOP/s", 1, 1},   Unit{"GFLOP/s", 1e9, 1}, Unit{"TFLOP/s", 1e12, 1}, Unit{"PFLOP/s", 1e15, 1},
    Unit{"FLOPS", 1, 1},    Unit{"GFLOPS", 1e9, 1},  Unit{"TFLOPS", 1e12, 1},  Unit{"PFLOPS", 1e15, 1},
};

constexpr std::array kPowerUnits{Unit{"W", 1, 1}, Unit{"kW", 1e3, 1}, Unit{"MW", 1e6, 1}};

// Token and sample counts: "15T" tokens, "7B" parameters.
constexpr std::array kCountUnits{Unit{"K", 1e3, 1}, Unit{"M", 1e6, 1}, Unit{"B", 1e9, 1}, Unit{"T", 1e12, 1}};

constexpr std::array kAllDimensions{Dimension::kTime,     Dimension::kBytes, Dimension::kBandwidth,
                                    Dimension::kFlopRate, Dimension::kPower, Dimension::kCount};

std::span<const Unit> units_of(Dimension d) {
  switch (d) {
    case Dimension::kTime: return kTimeUnits;
    case Dimension::kBytes: return kByteUnits;
    case Dimension::kBandwidth: return kBandwidthUnits;
    case Dimension::kFlopRate: return kFlopRateUnits;
    case Dimension::kPower: return kPowerUnits;
    case Dimension::kCount: return kCountUnits;
  }
  return {};
}

std::optional<Unit> find_unit(std::string_view name, Dimension d) {
  for (const Unit& unit : units_of(d)) {
    if (unit.name == name) return unit;
  }
  return std::nullopt;
}

// The first other dimension that knows this unit, to tell "2us" given for a
// bandwidth apart from a typo.
std::optional<Dimension> other_dimension_of(std::string_view name, Dimension wanted) {
  for (const Dimension d : kAllDimensions) {
    if (d != wanted && find_unit(name, d)) return d;
  }
  return std::nullopt;
}

// edit_distance() ignores case, which is right for spotting a typo but cannot
// choose between "GB/s" and "Gb/s" (a factor of 8). Moving upper-case ASCII
// letters out of the ASCII range makes it see case; used only as a tie-break.
std::string case_marked(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(static_cast<unsigned char>(c) | 0x80U);
  }
  return out;
}

// The unit the user most likely meant: the closest ignoring case (as for keys),
// then, among equally close ones, the closest with case.
std::optional<std::string_view> suggest_unit(std::string_view typed, Dimension d) {
  std::vector<std::string_view> names;
  for (const Unit& unit : units_of(d)) names.push_back(unit.name);
  const std::optional<std::string> best = closest_match(typed, std::span<const std::string_view>(names));
  if (!best) return std::nullopt;

  const std::size_t distance = edit_distance(typed, *best);
  const std::string typed_marked = case_marked(typed);
  std::optional<std::string_view> choice;
  std::size_t choice_distance = std::numeric_limits<std::size_t>::max();
  for (const std::string_view name : names) {
    if (edit_distance(typed, name) != distance) continue;
    const std::size_t with_case = edit_distance(typed_marked, case_marked(name));
    if (with_case < choice_distance) {
      choice_distance = with_case;
      choice = name;
    }
  }
  return choice;
}

std::string quoted(std::string_view s) { return "\"" + std::string(s) + "\""; }

std::string unit_list(Dimension d) {
  std::string out;
  for (const Unit& unit : units_of(d)) {
    if (!out.empty()) out += ", ";
    out += unit.name;
  }
  return out;
}

// Every message says what a valid value looks like, so a user can fix the file
// without opening the documentation.
[[noreturn]] void fail(Dimension d, const std::string& found) {
  throw UnitError("expected " + std::string(describe(d)) + " such as " + std::string(example(d)) +
                  " (units: " + unit_list(d) + "), found " + found);
}

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }

struct Number {
  double value;
  std::size_t length;  // characters of the text taken by the number, sign included
};

// std::from_chars is locale-independent, unlike strtod, but does not take a
// leading '+'; it is skipped here only when a digit or '.' follows, so "+-5"
// and "+nan" stay errors.
Number parse_number(std::string_view text, Dimension d) {
  std::size_t start = 0;
  if (text.size() > 1 && text[0] == '+' && (is_digit(text[1]) || text[1] == '.')) start = 1;
  double value = 0;
  const char* first = text.data() + start;
  const char* last = text.data() + text.size();
  const auto [end, ec] = std::from_chars(first, last, value);
  if (ec == std::errc::invalid_argument) fail(d, quoted(text) + ", which does not start with a number");
  if (ec == std::errc::result_out_of_range) fail(d, quoted(text) + ", which is out of range");
  return {value, start + static_cast<std::size_t>(end - first)};
}

}  // namespace

std::string_view describe(Dimension d) {
  switch (d) {
    case Dimension::kTime: return "a duration";
    case Dimension::kBytes: return "a size in bytes";
    case Dimension::kBandwidth: return "a bandwidth";
    case Dimension::kFlopRate: return "a FLOP rate";
    case Dimension::kPower: return "a power";
    case Dimension::kCount: return "a count";
  }
  return "a quantity";
}

std::string_view example(Dimension d) {
  switch (d) {
    case Dimension::kTime: return "\"2us\", \"30min\", \"50000h\" or seconds as a number";
    case Dimension::kBytes: return "\"80GiB\", \"512MB\" or bytes as a number";
    case Dimension::kBandwidth: return "\"400Gbps\" or \"900GB/s\"";
    case Dimension::kFlopRate: return "\"989TFLOP/s\", \"1.5PFLOPS\" or FLOP/s as a number";
    case Dimension::kPower: return "\"700W\", \"1.2kW\" or watts as a number";
    case Dimension::kCount: return "\"15T\", \"7B\" or a plain number";
  }
  return "a number";
}

double parse_quantity(std::string_view text, Dimension dim) {
  const std::string_view s = trim(text);
  if (s.empty()) fail(dim, "an empty string");

  const Number number = parse_number(s, dim);
  std::string_view unit_text = s.substr(number.length);
  if (!unit_text.empty() && unit_text.front() == ' ') unit_text.remove_prefix(1);  // "10 GB/s"

  double value = number.value;
  if (!unit_text.empty()) {
    const std::optional<Unit> unit = find_unit(unit_text, dim);
    if (!unit) {
      if (const std::optional<Dimension> other = other_dimension_of(unit_text, dim)) {
        fail(dim, quoted(s) + ", which is " + std::string(describe(*other)) + ", not " + std::string(describe(dim)));
      }
      std::string found = quoted(s);
      if (const std::optional<std::string_view> guess = suggest_unit(unit_text, dim)) {
        found += " - did you mean " + quoted(std::string(s.substr(0, number.length)) + std::string(*guess)) + "?";
      }
      fail(dim, found);
    }
    value = value * unit->multiply / unit->divide;
  }
  if (std::isnan(number.value) || std::isinf(number.value)) fail(dim, quoted(s) + ", which is not a finite number");
  if (!std::isfinite(value)) fail(dim, quoted(s) + ", which is out of range");
  return value;
}

}  // namespace trainsim::scenario
