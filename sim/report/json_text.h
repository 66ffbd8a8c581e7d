#pragma once
// Small helpers for the streamed JSON writers (trace and timeline files, which
// can hold millions of spans and are written without building a DOM).
#include <string>

#include "io/json_text.h"

namespace trainsim::report {

// `s` as a JSON string literal, quotes included (one definition, in io).
using io::json_string;

// Compresses a sorted list of ranks into "0-7,16,32-35".
template <typename Range>
std::string rank_ranges(const Range& ranks) {
  std::string out;
  auto it = ranks.begin();
  while (it != ranks.end()) {
    auto first = *it;
    auto last = first;
    ++it;
    while (it != ranks.end() && *it == last + 1) last = *it++;
    if (!out.empty()) out += ',';
    out += std::to_string(first);
    if (last != first) out += "-" + std::to_string(last);
  }
  return out;
}

}  // namespace trainsim::report
