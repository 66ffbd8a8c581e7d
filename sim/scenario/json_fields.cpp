#include "scenario/json_fields.h"

#include <cmath>
#include <fmt/format.h>

#include "scenario/did_you_mean.h"
#include "scenario/errors.h"

namespace trainsim::scenario {

namespace {
constexpr std::size_t kMaxFoundLength = 60;

std::string join(std::initializer_list<std::string_view> items) {
  std::string out;
  for (auto it = items.begin(); it != items.end(); ++it) {
    if (it != items.begin()) out += ", ";
    out += '"';
    out += *it;
    out += '"';
  }
  return out;
}

// A key typed short ("seq_len" for "seq_length") is too far from the full name
// for an edit-distance suggestion; a unique extension of it is suggested instead.
std::optional<std::string_view> unique_extension(std::string_view typed, const std::vector<std::string_view>& keys) {
  constexpr std::size_t kMinPrefix = 3;
  if (typed.size() < kMinPrefix) return std::nullopt;
  std::optional<std::string_view> found;
  for (std::string_view k : keys) {
    if (k.size() > typed.size() && k.starts_with(typed)) {
      if (found) return std::nullopt;
      found = k;
    }
  }
  return found;
}

// 2^63: the first double above every long long (a double cannot hold 2^63 - 1).
constexpr double kTwoTo63 = 9223372036854775808.0;

// The SI unit plain numbers are read in, for range messages.
std::string_view si_unit(Dimension d) {
  switch (d) {
    case Dimension::kTime: return " s";
    case Dimension::kBytes: return " B";
    case Dimension::kBandwidth: return " B/s";
    case Dimension::kFlopRate: return " FLOP/s";
    case Dimension::kPower: return " W";
    case Dimension::kCount: return "";
  }
  return "";
}

}  // namespace

std::string integer_range(long long min, long long max) {
  return fmt::format("an integer from {} to {}", min, max);
}

std::string json_pointer_escape(std::string_view key) {
  std::string out;
  for (char c : key) {
    if (c == '~') out += "~0";
    else if (c == '/') out += "~1";
    else out += c;
  }
  return out;
}

std::string describe_found(const nlohmann::json& value) {
  if (value.is_object()) return value.empty() ? "an empty object" : "an object";
  if (value.is_array()) return value.empty() ? "an empty array" : "an array";
  if (value.is_null()) return "null";
  std::string text = value.dump();
  if (text.size() > kMaxFoundLength) text = text.substr(0, kMaxFoundLength) + "...";
  return text;
}

ObjectReader::ObjectReader(const nlohmann::json& value, std::string file, std::string path,
                           std::vector<std::string_view> known,
                           std::vector<std::pair<std::string_view, std::string_view>> aliases)
    : value_(value), file_(std::move(file)), path_(std::move(path)) {
  if (!value_.is_object()) {
    // The empty pointer names the whole document; errors.cpp leaves it out.
    if (path_.empty())
      throw ScenarioError(file_, "", "a JSON object at the top level (the scenario)", describe_found(value_));
    throw ScenarioError(file_, path_, "an object", describe_found(value_));
  }
  std::vector<std::string_view> spellings = known;
  for (const auto& [alias, full] : aliases) spellings.push_back(alias);
  for (const auto& [key, _] : value_.items()) {
    std::string full;
    for (std::string_view k : known)
      if (k == key) full = key;
    for (const auto& [alias, target] : aliases)
      if (alias == key) full = std::string(target);
    if (full.empty()) {
      std::string expected = "a known key";
      if (auto near = closest_match(key, std::span<const std::string_view>(spellings)))
        expected += fmt::format(" (did you mean \"{}\"?)", *near);
      else if (auto abbreviated = unique_extension(key, spellings))
        expected += fmt::format(" (did you mean \"{}\"?)", *abbreviated);
      else
        expected += " (one of: " + [&] {
          std::string list;
          for (std::string_view k : known) list += (list.empty() ? "" : ", ") + std::string(k);
          return list;
        }() + ")";
      throw ScenarioError(file_, path_ + "/" + json_pointer_escape(key), expected, "unknown key \"" + key + "\"");
    }
    for (const auto& [seen_full, seen_spelling] : present_)
      if (seen_full == full)
        throw ScenarioError(file_, path_ + "/" + json_pointer_escape(key),
                            fmt::format("only one of \"{}\" and \"{}\" (the same setting{})", seen_spelling, key,
                                        seen_spelling == full || key == full ? "" : ", \"" + full + "\""),
                            "both");
    present_.emplace_back(full, key);
  }
}

const nlohmann::json* ObjectReader::find(std::string_view key) const {
  for (const auto& [full, spelling] : present_)
    if (full == key) return &value_.at(spelling);
  return nullptr;
}

bool ObjectReader::has(std::string_view key) const { return find(key) != nullptr; }

bool ObjectReader::has_non_null(std::string_view key) const {
  const nlohmann::json* v = find(key);
  return v != nullptr && !v->is_null();
}

const nlohmann::json& ObjectReader::raw(std::string_view key) const {
  const nlohmann::json* v = find(key);
  if (v == nullptr) missing(key, "a value");
  return *v;
}

std::string ObjectReader::path_of(std::string_view key) const {
  for (const auto& [full, spelling] : present_)
    if (full == key) return path_ + "/" + json_pointer_escape(spelling);
  return path_ + "/" + json_pointer_escape(key);
}

void ObjectReader::fail(std::string_view key, std::string expected, const nlohmann::json& found) const {
  throw ScenarioError(file_, path_of(key), std::move(expected), describe_found(found));
}

void ObjectReader::fail_message(std::string_view key, std::string message) const {
  throw ScenarioError(file_, path_of(key), std::move(message));
}

void ObjectReader::missing(std::string_view key, const std::string& expected) const {
  throw ScenarioError(file_, path_of(key), expected, "nothing (the key is required)");
}

long long ObjectReader::integer(std::string_view key, long long min, long long max,
                                std::optional<long long> fallback) const {
  const nlohmann::json* v = find(key);
  if (v == nullptr || (v->is_null() && fallback)) {
    if (!fallback) missing(key, integer_range(min, max));
    return *fallback;
  }
  long long result = 0;
  if (v->is_number_integer()) {
    if (v->is_number_unsigned() && v->get<unsigned long long>() > static_cast<unsigned long long>(max))
      fail(key, integer_range(min, max), *v);
    result = v->get<long long>();
  } else if (v->is_number_float()) {
    const double d = v->get<double>();
    // static_cast<double>(max) rounds up to 2^63 for max = INT64_MAX, and
    // converting 2^63 back to long long is undefined: reject it first.
    if (!(std::trunc(d) == d) || d < static_cast<double>(min) || d > static_cast<double>(max) || d >= kTwoTo63)
      fail(key, integer_range(min, max), *v);
    result = static_cast<long long>(d);
  } else {
    fail(key, integer_range(min, max), *v);
  }
  if (result < min || result > max) fail(key, integer_range(min, max), *v);
  return result;
}

double ObjectReader::number(std::string_view key, double min, double max, std::optional<double> fallback) const {
  const nlohmann::json* v = find(key);
  if (v == nullptr || (v->is_null() && fallback)) {
    if (!fallback) missing(key, fmt::format("a number from {} to {}", min, max));
    return *fallback;
  }
  if (!v->is_number()) fail(key, fmt::format("a number from {} to {}", min, max), *v);
  const double d = v->get<double>();
  if (!(d >= min && d <= max)) fail(key, fmt::format("a number from {} to {}", min, max), *v);
  return d;
}

double ObjectReader::quantity(std::string_view key, Dimension dim, double min, double max,
                              std::optional<double> fallback) const {
  const nlohmann::json* v = find(key);
  const std::string expected = fmt::format("{} such as {}", describe(dim), example(dim));
  if (v == nullptr || (v->is_null() && fallback)) {
    if (!fallback) missing(key, expected);
    return *fallback;
  }
  double d = 0.0;
  if (v->is_number()) {
    d = v->get<double>();
  } else if (v->is_string()) {
    try {
      d = parse_quantity(v->get<std::string>(), dim);
    } catch (const UnitError& e) {
      throw ScenarioError(file_, path_of(key), e.what());
    }
  } else {
    fail(key, expected, *v);
  }
  if (!(d >= min && d <= max))
    fail(key, fmt::format("{} from {:g}{} to {:g}{}", describe(dim), min, si_unit(dim), max, si_unit(dim)), *v);
  return d;
}

bool ObjectReader::boolean(std::string_view key, std::optional<bool> fallback) const {
  const nlohmann::json* v = find(key);
  if (v == nullptr || (v->is_null() && fallback)) {
    if (!fallback) missing(key, "true or false");
    return *fallback;
  }
  if (!v->is_boolean()) fail(key, "true or false", *v);
  return v->get<bool>();
}

std::string ObjectReader::text(std::string_view key, std::optional<std::string> fallback) const {
  const nlohmann::json* v = find(key);
  if (v == nullptr || (v->is_null() && fallback)) {
    if (!fallback) missing(key, "a string");
    return *fallback;
  }
  if (!v->is_string()) fail(key, "a string", *v);
  return v->get<std::string>();
}

std::string ObjectReader::choice(std::string_view key, std::initializer_list<std::string_view> allowed,
                                 std::optional<std::string> fallback) const {
  const nlohmann::json* v = find(key);
  const std::string expected = "one of " + join(allowed);
  if (v == nullptr || (v->is_null() && fallback)) {
    if (!fallback) missing(key, expected);
    return *fallback;
  }
  if (!v->is_string()) fail(key, expected, *v);
  const std::string s = v->get<std::string>();
  for (std::string_view a : allowed)
    if (a == s) return s;
  std::string hint = expected;
  const std::vector<std::string_view> options(allowed);
  if (auto near = closest_match(s, std::span<const std::string_view>(options)))
    hint += fmt::format(" (did you mean \"{}\"?)", *near);
  fail(key, hint, *v);
}

ObjectReader ObjectReader::object(std::string_view key, std::vector<std::string_view> known,
                                  std::vector<std::pair<std::string_view, std::string_view>> aliases) const {
  const nlohmann::json* v = find(key);
  if (v == nullptr) missing(key, "an object");
  return ObjectReader(*v, file_, path_of(key), std::move(known), std::move(aliases));
}

}  // namespace trainsim::scenario
