#include "sweep/chunk_board.h"

#include <gtest/gtest.h>

namespace trainsim::sweep {
namespace {

TEST(ChunkBoard, CutsTheListIntoChunksHandedOutInOrder) {
  ChunkBoard board(10, 4);  // [0,4) [4,8) [8,10)
  ASSERT_EQ(board.chunks(), 3U);
  EXPECT_EQ(board.chunk(2).begin, 8U);
  EXPECT_EQ(board.chunk(2).end, 10U);
  EXPECT_EQ(board.take(0.0), 0U);
  EXPECT_EQ(board.take(0.0), 1U);
  EXPECT_EQ(board.take(0.0), 2U);
  // Nothing fresh, nothing late (2 s bound before any chunk finished): none.
  EXPECT_FALSE(board.take(1.0).has_value());
  EXPECT_EQ(board.copies(), 0U);
}

TEST(ChunkBoard, ALateChunkIsHandedOutAgainAndTheFirstFinishCounts) {
  ChunkBoard board(3, 1);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(board.take(0.0).has_value());
  EXPECT_TRUE(board.finish(0, 0.0, 1.0));  // longest chunk 1 s: late after max(2, 3 x 1) = 3 s
  EXPECT_TRUE(board.finish(1, 0.0, 1.0));
  EXPECT_DOUBLE_EQ(board.late_after_s(), 3.0);
  EXPECT_FALSE(board.take(2.9).has_value());  // chunk 2 out for 2.9 s: not late
  EXPECT_FALSE(board.only_late_left(2.9));
  EXPECT_TRUE(board.only_late_left(3.1));
  EXPECT_EQ(board.take(3.1), 2U);  // its worker presumed gone: a copy
  EXPECT_EQ(board.copies(), 1U);
  EXPECT_TRUE(board.finish(2, 3.1, 4.0));    // the copy finishes first and counts
  EXPECT_FALSE(board.finish(2, 0.0, 5.0));   // the original, late, is dropped
  EXPECT_TRUE(board.all_finished());
  EXPECT_FALSE(board.take(10.0).has_value());
}

TEST(ChunkBoard, TheBoundFollowsTheLongestChunk) {
  ChunkBoard board(2, 1);
  ASSERT_EQ(board.take(0.0), 0U);
  ASSERT_EQ(board.take(0.0), 1U);
  EXPECT_TRUE(board.finish(0, 0.0, 10.0));  // 10 s: late after 30 s
  EXPECT_FALSE(board.take(29.0).has_value());
  EXPECT_EQ(board.take(30.5), 1U);
}

TEST(ChunkBoard, AnAbandonedChunkIsHandedOutAgainAtOnce) {
  ChunkBoard board(1, 1);
  ASSERT_EQ(board.take(0.0), 0U);
  board.abandon(0);  // e.g. the send to its worker failed
  EXPECT_TRUE(board.only_late_left(0.0));
  EXPECT_EQ(board.take(0.1), 0U);
  EXPECT_TRUE(board.finish(0, 0.1, 0.2));
}

TEST(ChunkBoard, RefusesEmptyChunks) { EXPECT_THROW(ChunkBoard(3, 0), std::invalid_argument); }

}  // namespace
}  // namespace trainsim::sweep
