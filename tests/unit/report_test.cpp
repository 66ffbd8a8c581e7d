#include <gtest/gtest.h>

#include "report/json_text.h"
#include "report/rank_list.h"

namespace trainsim {
namespace {

TEST(RankList, ParsesRangesAndSingles) {
  EXPECT_EQ(report::parse_rank_list("0-3,7,5", 8), (std::vector<long long>{0, 1, 2, 3, 5, 7}));
  EXPECT_EQ(report::rank_ranges(std::vector<long long>{0, 1, 2, 3, 5, 7, 8}), "0-3,5,7-8");
}

TEST(RankList, RejectsBadInput) {
  for (const char* bad : {"", "a", "1-", "-1", "3-1", "8", "0,,1", "1.5"}) {
    SCOPED_TRACE(bad);
    EXPECT_THROW(report::parse_rank_list(bad, 8), std::invalid_argument);
  }
}

TEST(RankList, DefaultsToAllSmallJobsOrTheFirstNode) {
  EXPECT_EQ(report::default_trace_ranks(16, 8).size(), 16u);
  EXPECT_EQ(report::default_trace_ranks(1024, 8).size(), 8u);
}

TEST(JsonText, EscapesControlCharacters) {
  EXPECT_EQ(report::json_string("a\"b\\c\n\x01"), "\"a\\\"b\\\\c\\n\\u0001\"");
}

}  // namespace
}  // namespace trainsim
