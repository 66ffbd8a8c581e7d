#include "sweep/journal.h"

#include <cstdint>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <vector>

#include "core/version.h"
#include "sweep/result_codec.h"

namespace trainsim::sweep {

namespace {

constexpr std::string_view kFormat = "trainsim sweep 1";

std::uint64_t fnv1a(std::uint64_t h, std::string_view bytes) {
  for (const char c : bytes) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ULL;
  }
  return h;
}

std::string hex(const std::vector<std::uint8_t>& bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(2 * bytes.size());
  for (const std::uint8_t b : bytes) {
    out += kDigits[b >> 4];
    out += kDigits[b & 0xf];
  }
  return out;
}

std::vector<std::uint8_t> unhex(std::string_view text) {
  const auto digit = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  if (text.size() % 2 != 0) throw std::invalid_argument("\"result\" has an odd number of hex digits");
  std::vector<std::uint8_t> out(text.size() / 2);
  for (std::size_t i = 0; i < out.size(); ++i) {
    const int hi = digit(text[2 * i]);
    const int lo = digit(text[2 * i + 1]);
    if (hi < 0 || lo < 0) throw std::invalid_argument("\"result\" is not lower-case hex");
    out[i] = static_cast<std::uint8_t>(hi * 16 + lo);
  }
  return out;
}

}  // namespace

std::string journal_key(std::string_view spec_bytes, config::Objective objective) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  h = fnv1a(h, core::kVersion);
  h = fnv1a(h, std::string_view("\0", 1));
  h = fnv1a(h, to_string(objective));
  h = fnv1a(h, std::string_view("\0", 1));
  h = fnv1a(h, spec_bytes);
  return fmt::format("{:016x}", h);
}

std::string journal_line(std::string_view key, const JournalRecord& record) {
  nlohmann::ordered_json j;
  j["journal"] = kFormat;
  j["key"] = key;
  j["stage"] = record.stage == JournalStage::kEvaluate ? "evaluate" : "replay";
  j["index"] = record.index;
  j["result"] = hex(encode_results({record.result}));
  return j.dump();
}

JournalRecord parse_journal_line(std::string_view line, std::string_view key) {
  const nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
  if (j.is_discarded() || !j.is_object()) throw std::invalid_argument("not a JSON object");
  const auto text = [&](const char* name) -> std::string {
    const auto it = j.find(name);
    if (it == j.end() || !it->is_string()) throw std::invalid_argument(fmt::format("\"{}\": expected a string", name));
    return it->get<std::string>();
  };
  if (text("journal") != kFormat)
    throw std::invalid_argument(fmt::format("\"journal\": expected \"{}\", found \"{}\"", kFormat, text("journal")));
  if (text("key") != key)
    throw std::invalid_argument(fmt::format(
        "written for another spec, objective or trainsim version (key {}, this run's {})", text("key"), key));
  JournalRecord r;
  const std::string stage = text("stage");
  if (stage == "evaluate") {
    r.stage = JournalStage::kEvaluate;
  } else if (stage == "replay") {
    r.stage = JournalStage::kReplay;
  } else {
    throw std::invalid_argument(fmt::format("\"stage\": expected \"evaluate\" or \"replay\", found \"{}\"", stage));
  }
  const auto index = j.find("index");
  if (index == j.end() || !index->is_number_unsigned())
    throw std::invalid_argument("\"index\": expected a non-negative integer");
  r.index = index->get<std::size_t>();
  std::vector<PointResult> results = decode_results(unhex(text("result")));
  if (results.size() != 1) throw std::invalid_argument("\"result\": expected exactly one point");
  r.result = std::move(results.front());
  return r;
}

}  // namespace trainsim::sweep
