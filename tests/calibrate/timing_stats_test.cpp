// The spread of a measurement's repetitions (calibrate/timing_stats.h): quantiles by
// linear interpolation between order statistics (type 7, numpy's default), worked by hand.
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <vector>

#include "timing_stats.h"

namespace {

using trainsim::calibrate::summarize;

TEST(TimingStats, QuantilesOfTenSamples) {
  // 1..10 in any order: h = 9 q, so p10 = 1.9, p25 = 3.25, median 5.5, p75 7.75, p90 9.1.
  const auto t = summarize({7, 3, 10, 1, 5, 2, 9, 4, 8, 6});
  EXPECT_EQ(t.repeats, 10);
  EXPECT_DOUBLE_EQ(t.min_s, 1.0);
  EXPECT_DOUBLE_EQ(t.p10_s, 1.9);
  EXPECT_DOUBLE_EQ(t.p25_s, 3.25);
  EXPECT_DOUBLE_EQ(t.median_s, 5.5);
  EXPECT_DOUBLE_EQ(t.p75_s, 7.75);
  EXPECT_DOUBLE_EQ(t.p90_s, 9.1);
  EXPECT_DOUBLE_EQ(t.max_s, 10.0);
  EXPECT_DOUBLE_EQ(t.mean_s, 5.5);
  EXPECT_DOUBLE_EQ(t.stddev_s, std::sqrt(82.5 / 9.0));  // sum (x - 5.5)^2 = 82.5
}

TEST(TimingStats, OddCountMedianAndOneSample) {
  EXPECT_DOUBLE_EQ(summarize({3e-6, 1e-6, 2e-6}).median_s, 2e-6);
  const auto one = summarize({4e-6});
  EXPECT_EQ(one.median_s, 4e-6);
  EXPECT_EQ(one.p90_s, 4e-6);
  EXPECT_EQ(one.stddev_s, 0.0);
  EXPECT_THROW(static_cast<void>(summarize({})), std::invalid_argument);
}

TEST(TimingStats, DistributionJsonNamesEveryField) {
  const auto j = trainsim::calibrate::distribution_json(summarize({1, 2, 3, 4, 5}));
  EXPECT_EQ(j.size(), 8u);
  EXPECT_DOUBLE_EQ(j.at("p25").get<double>(), 2.0);
  EXPECT_DOUBLE_EQ(j.at("p90").get<double>(), 4.6);
  EXPECT_DOUBLE_EQ(j.at("stddev").get<double>(), std::sqrt(2.5));
}

}  // namespace
