#pragma once
// "did you mean ...?" suggestions for unknown keys, presets and units.
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace trainsim::scenario {

// Optimal-string-alignment (Damerau-Levenshtein) distance, case-insensitive.
std::size_t edit_distance(std::string_view a, std::string_view b);

// The closest candidate when it is close enough to be a likely typo (distance at
// most max(2, |word|/3)); ties go to the earlier candidate.
std::optional<std::string> closest_match(std::string_view word, std::span<const std::string_view> candidates);
std::optional<std::string> closest_match(std::string_view word, std::span<const std::string> candidates);

}  // namespace trainsim::scenario
