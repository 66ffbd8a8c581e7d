#include "scenario/did_you_mean.h"

#include <algorithm>
#include <vector>

namespace trainsim::scenario {
namespace {

// ASCII-only folding: keys, presets and units are ASCII, and std::tolower would
// make the result depend on the process locale.
char fold(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

bool same(char a, char b) { return fold(a) == fold(b); }

// Typos are usually a letter or two, so allow about one edit per three letters,
// but at least two so that short words still get suggestions.
std::size_t threshold(std::string_view word) { return std::max<std::size_t>(2, word.size() / 3); }

template <typename Candidate>
std::optional<std::string> closest(std::string_view word, std::span<const Candidate> candidates) {
  std::optional<std::string> best;
  std::size_t best_distance = threshold(word) + 1;
  for (const Candidate& candidate : candidates) {
    const std::size_t d = edit_distance(word, candidate);
    // Strictly less: on a tie the earlier candidate stays.
    if (d < best_distance) {
      best_distance = d;
      best = std::string(candidate);
    }
  }
  return best;
}

}  // namespace

std::size_t edit_distance(std::string_view a, std::string_view b) {
  // Three rolling rows of the (|a|+1) x (|b|+1) table: the transposition case
  // looks two rows back.
  const std::size_t n = b.size();
  std::vector<std::size_t> two_back(n + 1);
  std::vector<std::size_t> prev(n + 1);
  std::vector<std::size_t> cur(n + 1);
  for (std::size_t j = 0; j <= n; ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= n; ++j) {
      const std::size_t cost = same(a[i - 1], b[j - 1]) ? 0 : 1;
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost});
      if (i > 1 && j > 1 && same(a[i - 1], b[j - 2]) && same(a[i - 2], b[j - 1])) {
        cur[j] = std::min(cur[j], two_back[j - 2] + 1);
      }
    }
    std::swap(two_back, prev);
    std::swap(prev, cur);
  }
  return prev[n];
}

std::optional<std::string> closest_match(std::string_view word, std::span<const std::string_view> candidates) {
  return closest(word, candidates);
}

std::optional<std::string> closest_match(std::string_view word, std::span<const std::string> candidates) {
  return closest(word, candidates);
}

}  // namespace trainsim::scenario
