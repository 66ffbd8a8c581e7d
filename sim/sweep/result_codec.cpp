#include "sweep/result_codec.h"

#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>

#include <nlohmann/json.hpp>

#include "sweep/point_fields.h"

namespace trainsim::sweep {

namespace {

using nlohmann::json;

template <typename T>
struct IsOptional : std::false_type {};
template <typename T>
struct IsOptional<std::optional<T>> : std::true_type {};

// A value as JSON (MessagePack on the wire): numbers, strings and flags as
// themselves, an enum as its integer, nothing as null, a struct as the array
// of its fields in for_each_field's order (compact, positional).
template <typename T>
json encode(const T& v) {
  if constexpr (std::is_enum_v<T>) {
    return static_cast<std::underlying_type_t<T>>(v);
  } else if constexpr (IsOptional<T>::value) {
    return v ? encode(*v) : json(nullptr);
  } else if constexpr (std::is_arithmetic_v<T> || std::is_same_v<T, std::string>) {
    return v;
  } else {
    json fields = json::array();
    for_each_field(v, [&](std::string_view, const auto& field) { fields.push_back(encode(field)); });
    return fields;
  }
}

template <typename T>
void decode(const json& j, T& v) {
  if constexpr (std::is_enum_v<T>) {
    v = static_cast<T>(j.get<std::underlying_type_t<T>>());
  } else if constexpr (IsOptional<T>::value) {
    if (j.is_null()) {
      v.reset();
      return;
    }
    decode(j, v.emplace());
  } else if constexpr (std::is_arithmetic_v<T> || std::is_same_v<T, std::string>) {
    v = j.get<T>();
  } else {
    std::size_t count = 0;
    for_each_field(v, [&](std::string_view, const auto&) { ++count; });
    if (!j.is_array() || j.size() != count)
      throw std::invalid_argument("sweep results: a malformed point result");
    std::size_t i = 0;
    for_each_field(v, [&](std::string_view, auto& field) { decode(j[i++], field); });
  }
}

}  // namespace

std::vector<std::uint8_t> encode_results(const std::vector<PointResult>& results) {
  json all = json::array();
  for (const PointResult& r : results) all.push_back(encode(r));
  return json::to_msgpack(all);
}

std::vector<PointResult> decode_results(const std::vector<std::uint8_t>& bytes) {
  try {
    const json all = json::from_msgpack(bytes);
    if (!all.is_array()) throw std::invalid_argument("sweep results: not a list");
    std::vector<PointResult> out(all.size());
    for (std::size_t i = 0; i < all.size(); ++i) decode(all[i], out[i]);
    return out;
  } catch (const json::exception& e) {
    throw std::invalid_argument(std::string("sweep results: ") + e.what());
  }
}

}  // namespace trainsim::sweep
