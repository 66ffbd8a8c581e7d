#include "scenario/did_you_mean.h"

#include <gtest/gtest.h>

#include <array>
#include <string>
#include <string_view>
#include <vector>

namespace trainsim::scenario {
namespace {

TEST(EditDistance, ClassicExamples) {
  // kitten -> sitten (k/s) -> sittin (e/i) -> sitting (+g)
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3U);
  EXPECT_EQ(edit_distance("sitting", "kitten"), 3U);
  EXPECT_EQ(edit_distance("flaw", "lawn"), 2U);
}

TEST(EditDistance, EmptyStrings) {
  EXPECT_EQ(edit_distance("", ""), 0U);
  EXPECT_EQ(edit_distance("", "abc"), 3U);
  EXPECT_EQ(edit_distance("abcd", ""), 4U);
}

TEST(EditDistance, AdjacentTranspositionCostsOne) {
  EXPECT_EQ(edit_distance("ab", "ba"), 1U);
  EXPECT_EQ(edit_distance("paralell", "parallel"), 1U);  // "el" typed for "le"
  EXPECT_EQ(edit_distance("teh", "the"), 1U);
}

TEST(EditDistance, OptimalStringAlignmentDoesNotEditASubstringTwice) {
  // True Damerau-Levenshtein gives 2 (ca -> ac -> abc); OSA may not edit the
  // transposed pair again, so it is 3.
  EXPECT_EQ(edit_distance("ca", "abc"), 3U);
}

TEST(EditDistance, IgnoresCase) {
  EXPECT_EQ(edit_distance("GBps", "gbps"), 0U);
  EXPECT_EQ(edit_distance("Kitten", "SITTING"), 3U);
  EXPECT_EQ(edit_distance("AB", "ba"), 1U);
}

TEST(ClosestMatch, SuggestsTheFixForATypo) {
  const std::array<std::string_view, 3> keys{"pipeline_model_parallel_size", "tensor_model_parallel_size",
                                             "data_parallel_size"};
  EXPECT_EQ(closest_match("tensor_model_paralel_size", keys), "tensor_model_parallel_size");
  EXPECT_EQ(closest_match("data_paralel_size", keys), "data_parallel_size");
}

TEST(ClosestMatch, NothingWhenNoCandidateIsClose) {
  const std::array<std::string_view, 3> keys{"pipeline_model_parallel_size", "tensor_model_parallel_size",
                                             "data_parallel_size"};
  EXPECT_EQ(closest_match("xyz", keys), std::nullopt);
  EXPECT_EQ(closest_match("xyz", std::span<const std::string_view>{}), std::nullopt);
}

TEST(ClosestMatch, ThresholdIsTwoForShortWords) {
  const std::array<std::string_view, 1> gpu{"gpu"};
  EXPECT_EQ(closest_match("gxx", gpu), "gpu");        // distance 2 = max(2, 3/3)
  EXPECT_EQ(closest_match("xxx", gpu), std::nullopt);  // distance 3
}

TEST(ClosestMatch, ThresholdIsAThirdOfALongWord) {
  // "abcdefghijkl" has 12 letters: up to 4 edits are accepted, 5 are not.
  const std::array<std::string_view, 2> candidates{"abcdefghWXYZ", "abcdefgVWXYZ"};
  EXPECT_EQ(closest_match("abcdefghijkl", candidates), "abcdefghWXYZ");
  const std::array<std::string_view, 1> too_far{"abcdefgVWXYZ"};
  EXPECT_EQ(closest_match("abcdefghijkl", too_far), std::nullopt);
}

TEST(ClosestMatch, ExactMatchIgnoringCaseWins) {
  const std::array<std::string_view, 2> presets{"h100_sxm", "H200_SXM"};
  EXPECT_EQ(closest_match("h200_sxm", presets), "H200_SXM");
}

TEST(ClosestMatch, TiesGoToTheEarlierCandidate) {
  const std::array<std::string_view, 2> ab{"cat", "bat"};
  EXPECT_EQ(closest_match("hat", ab), "cat");
  const std::array<std::string_view, 2> ba{"bat", "cat"};
  EXPECT_EQ(closest_match("hat", ba), "bat");
}

TEST(ClosestMatch, AcceptsOwningStrings) {
  const std::vector<std::string> keys{"global_batch_size", "micro_batch_size"};
  EXPECT_EQ(closest_match("micro_bacth_size", keys), "micro_batch_size");
  EXPECT_EQ(closest_match("learning_rate", keys), std::nullopt);
}

}  // namespace
}  // namespace trainsim::scenario
