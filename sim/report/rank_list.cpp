#include "report/rank_list.h"

#include <algorithm>
#include <charconv>
#include <stdexcept>
#include <string>

namespace trainsim::report {

namespace {
constexpr long long kDefaultAllRanksUpTo = 64;

long long parse_rank(std::string_view s, std::string_view whole, long long num_gpus) {
  long long v = -1;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || ptr != s.data() + s.size())
    throw std::invalid_argument("rank list \"" + std::string(whole) + "\": \"" + std::string(s) +
                                "\" is not a rank number (expected a list such as 0-7,16)");
  if (v < 0 || v >= num_gpus)
    throw std::invalid_argument("rank list \"" + std::string(whole) + "\": rank " + std::to_string(v) +
                                " is outside 0-" + std::to_string(num_gpus - 1));
  return v;
}
}  // namespace

std::vector<long long> parse_rank_list(std::string_view text, long long num_gpus) {
  std::vector<long long> ranks;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    const std::size_t comma = std::min(text.find(',', pos), text.size());
    const std::string_view item = text.substr(pos, comma - pos);
    const std::size_t dash = item.find('-');
    if (dash == std::string_view::npos) {
      ranks.push_back(parse_rank(item, text, num_gpus));
    } else {
      const long long a = parse_rank(item.substr(0, dash), text, num_gpus);
      const long long b = parse_rank(item.substr(dash + 1), text, num_gpus);
      if (b < a) throw std::invalid_argument("rank list \"" + std::string(text) + "\": range " + std::string(item) +
                                             " runs backwards");
      if (b - a > 10'000'000) throw std::invalid_argument("rank list: range too large");
      for (long long r = a; r <= b; ++r) ranks.push_back(r);
    }
    pos = comma + 1;
  }
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  return ranks;
}

std::vector<long long> default_trace_ranks(long long num_gpus, int gpus_per_node) {
  const long long count = num_gpus <= kDefaultAllRanksUpTo ? num_gpus : std::min<long long>(gpus_per_node, num_gpus);
  std::vector<long long> ranks;
  for (long long r = 0; r < count; ++r) ranks.push_back(r);
  return ranks;
}

}  // namespace trainsim::report
