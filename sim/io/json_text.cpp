#include "io/json_text.h"

#include <array>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

namespace trainsim::io {

std::string json_string(std::string_view s) {
  std::string out = "\"";
  for (const char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          std::array<char, 8> u{};
          std::snprintf(u.data(), u.size(), "\\u%04x", static_cast<unsigned>(c));
          out += u.data();
        } else {
          out += c;
        }
    }
  }
  out += '"';
  return out;
}

std::string json_number(double v) {
  // The shortest round-trip digits, from the scientific form "d.ddde+XX".
  std::array<char, 64> buf{};
  const auto [end, ec] = std::to_chars(buf.data(), buf.data() + buf.size(), v, std::chars_format::scientific);
  if (ec != std::errc()) throw std::logic_error("json_number: to_chars failed");
  const std::string_view sci(buf.data(), static_cast<std::size_t>(end - buf.data()));
  const std::size_t e = sci.find('e');
  const bool negative = sci.front() == '-';
  std::string digits;
  for (const char c : sci.substr(negative ? 1 : 0, e - (negative ? 1 : 0)))
    if (c != '.') digits += c;
  const int exp = std::atoi(sci.data() + e + 1);  // of the first digit
  std::string out = negative ? "-" : "";
  if (exp < -4 || exp >= 16) {
    out += digits.front();
    if (digits.size() > 1) out += "." + digits.substr(1);
    const int a = exp < 0 ? -exp : exp;
    out += exp < 0 ? "e-" : "e+";
    if (a < 10) out += '0';
    out += std::to_string(a);
    return out;
  }
  if (exp < 0) return out + "0." + std::string(static_cast<std::size_t>(-exp - 1), '0') + digits;
  const auto integer_digits = static_cast<std::size_t>(exp) + 1;
  if (digits.size() <= integer_digits) return out + digits + std::string(integer_digits - digits.size(), '0');
  return out + digits.substr(0, integer_digits) + "." + digits.substr(integer_digits);
}

std::string seconds_text(std::int64_t ns) {
  constexpr std::int64_t kSecond = 1000000000;
  std::string frac = std::to_string(ns % kSecond);
  return std::to_string(ns / kSecond) + "." + std::string(9 - frac.size(), '0') + frac;
}

}  // namespace trainsim::io
