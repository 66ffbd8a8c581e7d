// Level of detail: folding and the no-pixel-twice rule, with counts by hand.
#include <gtest/gtest.h>

#include "model/level_of_detail.h"

namespace trainsim::gui {
namespace {

// 1000 spans of 0.5 ms, one every millisecond: [k ms, k ms + 0.5 ms].
Lane regular_lane() {
  TimelineData t;
  t.lanes.push_back(Lane{});
  for (int k = 0; k < 1000; ++k) {
    Span s;
    s.start = k * 1e-3;
    s.end = s.start + 0.5e-3;
    s.category = Category::kForward;
    t.lanes[0].spans.push_back(s);
  }
  finalize(t);
  return t.lanes[0];
}

TEST(LevelOfDetail, FoldsSpansNarrowerThanTheMinimum) {
  const Lane lane = regular_lane();
  // 10 ms per px: a span is 0.05 px; a fold takes the spans starting within
  // 2.95 px = 29.5 ms (off the 1 ms grid, so no rounding decides), so 30 spans
  // per block: 33 blocks of 30 and one of 10.
  const TimeMapping m{0.0, 10e-3, 0.0};
  std::vector<DrawBlock> blocks;
  visible_blocks(lane, m, 0.0, 200.0, 2.95, blocks);
  ASSERT_EQ(blocks.size(), 34u);
  EXPECT_EQ(blocks[0].count, 30u);
  EXPECT_EQ(blocks[33].count, 10u);
  EXPECT_TRUE(blocks[0].uniform);
  EXPECT_NEAR(blocks[1].x0, 3.0, 1e-9);  // span 30 starts at 30 ms
  std::size_t total = 0;
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    total += blocks[i].count;
    if (i > 0) {
      EXPECT_LE(blocks[i - 1].x1, blocks[i].x0) << "block " << i << " overlaps its predecessor";
    }
  }
  EXPECT_EQ(total, 1000u);
}

TEST(LevelOfDetail, WideSpansAreSingleBlocks) {
  const Lane lane = regular_lane();
  // 10 us per px: a span is 50 px. The window [0, 200 px] is [0, 2 ms]: spans
  // starting at 0, 1 and 2 ms.
  const TimeMapping m{0.0, 10e-6, 0.0};
  std::vector<DrawBlock> blocks;
  visible_blocks(lane, m, 0.0, 200.0, 3.0, blocks);
  ASSERT_EQ(blocks.size(), 3u);
  EXPECT_DOUBLE_EQ(blocks[0].x0, 0.0);
  EXPECT_DOUBLE_EQ(blocks[0].x1, 50.0);
  EXPECT_DOUBLE_EQ(blocks[1].x0, 100.0);
  EXPECT_EQ(blocks[2].first, 2u);
  EXPECT_EQ(blocks[2].count, 1u);
}

TEST(LevelOfDetail, StartsAtTheFirstSpanReachingTheWindow) {
  const Lane lane = regular_lane();
  // The window starts at 500.25 ms, inside span 500 [500, 500.5] ms.
  const TimeMapping m{0.50025, 10e-6, 0.0};
  std::vector<DrawBlock> blocks;
  visible_blocks(lane, m, 0.0, 100.0, 3.0, blocks);
  ASSERT_FALSE(blocks.empty());
  EXPECT_EQ(blocks[0].first, 500u);
  EXPECT_DOUBLE_EQ(blocks[0].x0, 0.0);  // clamped to the window
  EXPECT_NEAR(blocks[0].x1, 25.0, 1e-6);
}

}  // namespace
}  // namespace trainsim::gui
