#pragma once
// Level of detail (Tracy's rule): spans narrower than a few pixels are folded
// into one "N items" block; the walk binary-searches past each fold, so a lane
// costs O(visible blocks x log n), not O(spans), and no pixel is drawn twice.
#include <cstddef>
#include <vector>

#include "model/time_mapping.h"
#include "model/timeline_data.h"

namespace trainsim::gui {

struct DrawBlock {
  double x0 = 0.0;  // px, clamped to the visible window
  double x1 = 0.0;
  std::size_t first = 0;  // first span index in the lane
  std::size_t count = 1;  // spans in the block; > 1 means folded
  Category category = Category::kOther;
  bool uniform = true;  // every folded span has `category` (only checked for small folds)
};

// Blocks of `lane` between pixels x_left and x_right. Spans at least min_px wide
// are single blocks; narrower ones start a fold that takes every span starting
// within min_px of it. `out` is cleared first (reused to avoid allocations).
void visible_blocks(const Lane& lane, const TimeMapping& m, double x_left, double x_right, double min_px,
                    std::vector<DrawBlock>& out);

// Folds up to this many spans are scanned for their real end and uniform category.
inline constexpr std::size_t kScannedFold = 64;

}  // namespace trainsim::gui
