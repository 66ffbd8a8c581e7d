#include "scenario/collective_options.h"

#include <charconv>
#include <limits>

namespace trainsim::scenario {

std::optional<net::CollectiveKind> collective_kind_from_string(std::string_view name) {
  if (name == "p2p") return net::CollectiveKind::kSendRecv;  // the CLI's own short name
  return net::collective_from_name(name);
}

std::optional<std::uint64_t> parse_byte_size(std::string_view text) {
  std::uint64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end == text.data()) return std::nullopt;
  const std::string_view suffix(end, static_cast<std::size_t>(text.data() + text.size() - end));
  if (suffix.empty()) return value;
  if (suffix.size() != 1) return std::nullopt;
  int shift = 0;
  switch (suffix.front()) {
    case 'K': case 'k': shift = 10; break;
    case 'M': case 'm': shift = 20; break;
    case 'G': case 'g': shift = 30; break;
    case 'T': case 't': shift = 40; break;
    default: return std::nullopt;
  }
  if (value > (std::numeric_limits<std::uint64_t>::max() >> shift)) return std::nullopt;
  return value << shift;
}

}  // namespace trainsim::scenario
