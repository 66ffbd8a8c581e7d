#pragma once
// Typed access to one JSON object of a scenario file. Every accessor checks type
// and range and throws ScenarioError naming the file, the JSON path, what was
// expected and what was found; unknown keys are rejected with a did-you-mean.
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "scenario/units.h"

namespace trainsim::scenario {

// A key as one step of an RFC 6901 JSON pointer ("~" -> "~0", "/" -> "~1").
std::string json_pointer_escape(std::string_view key);

// What an integer key in [min, max] expects, for messages ("an integer from 1 to 96").
std::string integer_range(long long min, long long max);

// A short rendering of a JSON value for messages ("\"fast\"", "-3", "an object").
std::string describe_found(const nlohmann::json& value);

class ObjectReader {
 public:
  // `known` lists every key allowed here; aliases map a short name to its key.
  ObjectReader(const nlohmann::json& value, std::string file, std::string path, std::vector<std::string_view> known,
               std::vector<std::pair<std::string_view, std::string_view>> aliases = {});

  [[nodiscard]] bool has(std::string_view key) const;
  [[nodiscard]] bool has_non_null(std::string_view key) const;
  [[nodiscard]] const nlohmann::json& raw(std::string_view key) const;
  [[nodiscard]] std::string path_of(std::string_view key) const;
  [[nodiscard]] const std::string& file() const { return file_; }
  [[nodiscard]] const std::string& path() const { return path_; }

  long long integer(std::string_view key, long long min, long long max, std::optional<long long> fallback = {}) const;
  double number(std::string_view key, double min, double max, std::optional<double> fallback = {}) const;
  double quantity(std::string_view key, Dimension dim, double min, double max,
                  std::optional<double> fallback = {}) const;
  bool boolean(std::string_view key, std::optional<bool> fallback = {}) const;
  std::string text(std::string_view key, std::optional<std::string> fallback = {}) const;
  std::string choice(std::string_view key, std::initializer_list<std::string_view> allowed,
                     std::optional<std::string> fallback = {}) const;
  ObjectReader object(std::string_view key, std::vector<std::string_view> known,
                      std::vector<std::pair<std::string_view, std::string_view>> aliases = {}) const;

  [[noreturn]] void fail(std::string_view key, std::string expected, const nlohmann::json& found) const;
  [[noreturn]] void fail_message(std::string_view key, std::string message) const;
  // A required key is absent: "expected <expected>, found nothing (the key is required)".
  [[noreturn]] void missing(std::string_view key, const std::string& expected) const;

 private:
  [[nodiscard]] const nlohmann::json* find(std::string_view key) const;

  const nlohmann::json& value_;
  std::string file_;
  std::string path_;
  // key -> the spelling used in the file (alias or full name)
  std::vector<std::pair<std::string, std::string>> present_;
};

}  // namespace trainsim::scenario
