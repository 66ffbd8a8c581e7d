#pragma once
// Host-side helpers every kernel launcher shares (kernels/src/*.cu): argument checks
// before anything is launched, pointer alignment for the 16-byte vector paths, and the
// grid of a grid-stride kernel.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace trainsim::kernels::launch {

// Throws std::invalid_argument("what: message") unless ok.
inline void require(bool ok, const char* what, const std::string& message) {
  if (!ok) throw std::invalid_argument(std::string(what) + ": " + message);
}

inline bool aligned(const void* p, std::uintptr_t bytes) { return reinterpret_cast<std::uintptr_t>(p) % bytes == 0; }
inline bool aligned16(const void* p) { return aligned(p, 16); }

// Blocks of `threads` for `work` items, at least 1 and at most `max_blocks` (the
// kernel strides over the rest).
inline unsigned flat_blocks(std::size_t work, int threads, std::size_t max_blocks) {
  const auto t = static_cast<std::size_t>(threads);
  return static_cast<unsigned>(std::clamp<std::size_t>((work + t - 1) / t, 1, max_blocks));
}

}  // namespace trainsim::kernels::launch
