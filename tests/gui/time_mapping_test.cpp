// Time-to-pixel mapping: data-driven, no display.
#include <gtest/gtest.h>

#include <ostream>

#include "model/time_mapping.h"

namespace trainsim::gui {
namespace {

struct MappingCase {
  double t0, seconds_per_px, x0;
  double t, x;  // x_of(t) == x, t_of(x) == t
};

std::ostream& operator<<(std::ostream& os, const MappingCase& c) {
  return os << "t0=" << c.t0 << " s/px=" << c.seconds_per_px << " x0=" << c.x0 << " t=" << c.t << " x=" << c.x;
}

class TimeMappingCase : public ::testing::TestWithParam<MappingCase> {};

TEST_P(TimeMappingCase, MapsBothWays) {
  const MappingCase c = GetParam();
  const TimeMapping m{c.t0, c.seconds_per_px, c.x0};
  EXPECT_NEAR(m.x_of(c.t), c.x, 1e-9);
  EXPECT_NEAR(m.t_of(c.x), c.t, 1e-12);
}

// x = x0 + (t - t0) / seconds_per_px, by hand.
INSTANTIATE_TEST_SUITE_P(HandDerived, TimeMappingCase,
                         ::testing::Values(MappingCase{0.0, 1e-3, 100.0, 0.5, 600.0},     // 500 ms at 1 ms/px
                                           MappingCase{1.0, 2e-6, 0.0, 1.001, 500.0},    // 1 ms at 2 us/px
                                           MappingCase{-0.5, 0.01, 170.0, 0.0, 220.0},   // 0.5 s at 10 ms/px
                                           MappingCase{0.0, 2e-3, 170.0, 2.0, 1170.0},   // the render test's scale
                                           MappingCase{0.25, 5e-4, 100.0, 0.25, 100.0}));

TEST(TimeMapping, ZoomKeepsTheTimeUnderTheAnchor) {
  const TimeMapping m{0.0, 1e-3, 100.0};
  const TimeMapping z = m.zoomed(2.0, 600.0);  // t = 0.5 under x = 600
  EXPECT_DOUBLE_EQ(z.seconds_per_px, 5e-4);
  EXPECT_DOUBLE_EQ(z.t0, 0.25);  // 0.5 - 500 px x 0.5 ms
  EXPECT_NEAR(z.x_of(0.5), 600.0, 1e-9);
  const TimeMapping out = z.zoomed(0.5, 600.0);
  EXPECT_NEAR(out.seconds_per_px, 1e-3, 1e-18);
  EXPECT_NEAR(out.t0, 0.0, 1e-12);
}

TEST(TimeMapping, ZoomIsClamped) {
  const TimeMapping m{0.0, 1e-12, 0.0};
  EXPECT_DOUBLE_EQ(m.zoomed(10.0, 0.0).seconds_per_px, TimeMapping::kMinSecondsPerPx);
}

TEST(TimeMapping, PanMovesContentWithTheDrag) {
  const TimeMapping m{0.0, 1e-3, 100.0};
  EXPECT_DOUBLE_EQ(m.panned(100.0).t0, -0.1);  // drag right: earlier times come in
  EXPECT_DOUBLE_EQ(m.panned(-50.0).t0, 0.05);
}

TEST(TimeMapping, FitFillsTheWidth) {
  const TimeMapping m = TimeMapping::fit(0.0, 2.0, 170.0, 1000.0);
  EXPECT_DOUBLE_EQ(m.seconds_per_px, 0.002);
  EXPECT_DOUBLE_EQ(m.x_of(0.0), 170.0);
  EXPECT_DOUBLE_EQ(m.x_of(2.0), 1170.0);
}

struct StepCase {
  double seconds_per_px, min_spacing_px, step;
};
std::ostream& operator<<(std::ostream& os, const StepCase& c) {
  return os << "s/px=" << c.seconds_per_px << " spacing=" << c.min_spacing_px << " step=" << c.step;
}

class RulerStepCase : public ::testing::TestWithParam<StepCase> {};

TEST_P(RulerStepCase, PicksOneTwoOrFive) {
  EXPECT_NEAR(ruler_step(GetParam().seconds_per_px, GetParam().min_spacing_px), GetParam().step,
              GetParam().step * 1e-9);
}

// The smallest 1, 2 or 5 x 10^k (past 50 s: clock steps, then days) at least
// seconds_per_px x min_spacing_px.
INSTANTIATE_TEST_SUITE_P(HandDerived, RulerStepCase,
                         ::testing::Values(StepCase{1e-3, 90.0, 0.1},     // 90 ms -> 100 ms
                                           StepCase{1e-6, 90.0, 1e-4},    // 90 us -> 100 us
                                           StepCase{3e-6, 90.0, 5e-4},    // 270 us -> 500 us
                                           StepCase{1e-3, 100.0, 0.1},    // exactly 100 ms
                                           StepCase{1.5e-9, 100.0, 2e-7},   // 150 ns -> 200 ns
                                           StepCase{0.5, 90.0, 50.0},       // 45 s -> 50 s
                                           StepCase{1.0, 90.0, 120.0},      // 90 s -> 2 min
                                           StepCase{10.0, 90.0, 900.0},     // 15 min exactly
                                           StepCase{100.0, 90.0, 10800.0},  // 2.5 h -> 3 h
                                           StepCase{600.0, 90.0, 86400.0},  // 15 h -> 1 day
                                           StepCase{2000.0, 90.0, 432000.0}));  // 2.08 days -> 5 days

TEST(Ruler, TicksCoverTheWindowWithUnits) {
  const TimeMapping m{0.0, 1e-3, 0.0};  // 1 ms per px
  const auto ticks = ruler_ticks(m, 0.0, 350.0, 90.0);  // step 100 ms
  ASSERT_EQ(ticks.size(), 4u);  // 0, 100, 200, 300 ms
  EXPECT_EQ(ticks[0].label, "0 s");
  EXPECT_EQ(ticks[1].label, "100 ms");
  EXPECT_NEAR(ticks[3].x, 300.0, 1e-9);
}

TEST(FormatDuration, ChoosesTheUnit) {
  EXPECT_EQ(format_duration(0.0015), "1.5 ms");
  EXPECT_EQ(format_duration(2.5e-7), "250 ns");
  EXPECT_EQ(format_duration(2.0), "2 s");
  EXPECT_EQ(format_duration(90.0), "1.5 min");
  EXPECT_EQ(format_duration(7200.0), "2 h");
  EXPECT_EQ(format_duration(1e-6), "1 us");
}

}  // namespace
}  // namespace trainsim::gui
