#include "scenario/units.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

namespace trainsim::scenario {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

struct Case {
  std::string_view text;
  double expected;
};

// Every value below is derived by hand from the unit's definition, and compared
// exactly: the parser divides by exact powers of ten for sub-units, so "3ns" is
// the same double as the literal 3e-9.
void expect_all(Dimension d, const std::vector<Case>& cases) {
  for (const Case& c : cases) {
    EXPECT_EQ(parse_quantity(c.text, d), c.expected) << "\"" << c.text << "\" as " << describe(d);
  }
}

std::string error_of(std::string_view text, Dimension d) {
  try {
    static_cast<void>(parse_quantity(text, d));
  } catch (const UnitError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no UnitError for \"" << text << "\" as " << describe(d);
  return {};
}

TEST(ParseQuantity, ExamplesFromTheScenarioFormat) {
  EXPECT_EQ(parse_quantity("400Gbps", Dimension::kBandwidth), 5e10);  // 400e9 bits / 8
  EXPECT_EQ(parse_quantity("900GB/s", Dimension::kBandwidth), 9e11);
  EXPECT_EQ(parse_quantity("2us", Dimension::kTime), 2e-6);
  EXPECT_EQ(parse_quantity("30min", Dimension::kTime), 1800.0);
  EXPECT_EQ(parse_quantity("50000h", Dimension::kTime), 1.8e8);
  EXPECT_EQ(parse_quantity("80GiB", Dimension::kBytes), 85899345920.0);  // 80 * 2^30
  EXPECT_EQ(parse_quantity("989TFLOP/s", Dimension::kFlopRate), 9.89e14);
  EXPECT_EQ(parse_quantity("700W", Dimension::kPower), 700.0);
  EXPECT_EQ(parse_quantity("15T", Dimension::kCount), 1.5e13);
}

TEST(ParseQuantity, EveryTimeUnit) {
  expect_all(Dimension::kTime, {{"5ps", 5e-12},
                                {"3ns", 3e-9},
                                {"7us", 7e-6},
                                {"7µs", 7e-6},
                                {"250ms", 0.25},
                                {"1.5s", 1.5},
                                {"2min", 120.0},
                                {"2h", 7200.0},
                                {"3d", 259200.0}});
}

TEST(ParseQuantity, EveryByteUnit) {
  expect_all(Dimension::kBytes, {{"512B", 512.0},
                                 {"4KB", 4e3},
                                 {"512MB", 5.12e8},
                                 {"80GB", 8e10},
                                 {"2TB", 2e12},
                                 {"3PB", 3e15},
                                 {"4KiB", 4096.0},
                                 {"3MiB", 3145728.0},
                                 {"1GiB", 1073741824.0},
                                 {"2TiB", 2199023255552.0}});
}

TEST(ParseQuantity, EveryBandwidthUnit) {
  expect_all(Dimension::kBandwidth, {{"10B/s", 10.0},
                                     {"5KB/s", 5e3},
                                     {"5MB/s", 5e6},
                                     {"900GB/s", 9e11},
                                     {"3.35TB/s", 3.35e12},
                                     {"2KiB/s", 2048.0},
                                     {"2MiB/s", 2097152.0},
                                     {"2GiB/s", 2147483648.0},
                                     {"8bps", 1.0},
                                     {"1bps", 0.125},
                                     {"8Kbps", 1e3},
                                     {"1Mbps", 125000.0},
                                     {"400Gbps", 5e10},
                                     {"1.6Tbps", 2e11},
                                     {"8Kb/s", 1e3},
                                     {"1Mb/s", 125000.0},
                                     {"100Gb/s", 1.25e10},
                                     {"1Tb/s", 1.25e11}});
}

TEST(ParseQuantity, EveryFlopRateUnit) {
  expect_all(Dimension::kFlopRate, {{"100FLOP/s", 100.0},
                                    {"20GFLOP/s", 2e10},
                                    {"989TFLOP/s", 9.89e14},
                                    {"2PFLOP/s", 2e15},
                                    {"100FLOPS", 100.0},
                                    {"20GFLOPS", 2e10},
                                    {"312TFLOPS", 3.12e14},
                                    {"1.5PFLOPS", 1.5e15}});
}

TEST(ParseQuantity, EveryPowerUnit) {
  expect_all(Dimension::kPower, {{"700W", 700.0}, {"1.5kW", 1500.0}, {"20MW", 2e7}});
}

TEST(ParseQuantity, EveryCountSuffix) {
  expect_all(Dimension::kCount, {{"4K", 4e3}, {"2M", 2e6}, {"7B", 7e9}, {"15T", 1.5e13}, {"4096", 4096.0}});
}

TEST(ParseQuantity, PlainNumbersAreSiBaseUnits) {
  EXPECT_EQ(parse_quantity("3.0e11", Dimension::kBandwidth), 3e11);
  EXPECT_EQ(parse_quantity("3e11", Dimension::kFlopRate), 3e11);
  EXPECT_EQ(parse_quantity("0.5", Dimension::kTime), 0.5);
  EXPECT_EQ(parse_quantity(".5", Dimension::kTime), 0.5);
  EXPECT_EQ(parse_quantity("1024", Dimension::kBytes), 1024.0);
  EXPECT_EQ(parse_quantity("700", Dimension::kPower), 700.0);
  EXPECT_EQ(parse_quantity("1E3", Dimension::kCount), 1000.0);
}

TEST(ParseQuantity, SurroundingWhitespaceAndOneSpaceBeforeTheUnit) {
  EXPECT_EQ(parse_quantity(" 10 GB/s ", Dimension::kBandwidth), 1e10);
  EXPECT_EQ(parse_quantity("\t2 us\n", Dimension::kTime), 2e-6);
  EXPECT_EQ(parse_quantity("  42  ", Dimension::kCount), 42.0);
}

TEST(ParseQuantity, SignsAreAcceptedAndRangeIsTheCallersJob) {
  EXPECT_EQ(parse_quantity("-5us", Dimension::kTime), -5e-6);
  EXPECT_EQ(parse_quantity("+5us", Dimension::kTime), 5e-6);
  EXPECT_EQ(parse_quantity("-1", Dimension::kCount), -1.0);
  EXPECT_EQ(parse_quantity("0GB", Dimension::kBytes), 0.0);
}

TEST(ParseQuantity, UnitsAreCaseSensitive) {
  // Bits and bytes differ only by case, so neither is guessed.
  EXPECT_EQ(parse_quantity("8Gb/s", Dimension::kBandwidth), 1e9);
  EXPECT_EQ(parse_quantity("8GB/s", Dimension::kBandwidth), 8e9);
  EXPECT_THROW(static_cast<void>(parse_quantity("8gb/s", Dimension::kBandwidth)), UnitError);
  EXPECT_THROW(static_cast<void>(parse_quantity("2US", Dimension::kTime)), UnitError);
}

TEST(ParseQuantityErrors, UnknownUnitListsTheUnitsAndSuggestsTheNearest) {
  const std::string message = error_of("400Gbs", Dimension::kBandwidth);
  EXPECT_THAT(message, HasSubstr("expected a bandwidth such as \"400Gbps\" or \"900GB/s\""));
  EXPECT_THAT(message, HasSubstr("(units: B/s, KB/s, MB/s, GB/s, TB/s, KiB/s, MiB/s, GiB/s, bps, Kbps, Mbps, "
                                 "Gbps, Tbps, Kb/s, Mb/s, Gb/s, Tb/s)"));
  EXPECT_THAT(message, HasSubstr("found \"400Gbs\" - did you mean \"400Gbps\"?"));
}

TEST(ParseQuantityErrors, SuggestionKeepsTheCaseTheUserTyped) {
  // "GBs" is as close to "Gbps" as to "GB/s" ignoring case; the capital B says bytes.
  EXPECT_THAT(error_of("900GBs", Dimension::kBandwidth), HasSubstr("did you mean \"900GB/s\"?"));
  EXPECT_THAT(error_of("10gb", Dimension::kBytes), HasSubstr("did you mean \"10GB\"?"));
  EXPECT_THAT(error_of("5 mins", Dimension::kTime), HasSubstr("found \"5 mins\" - did you mean \"5min\"?"));
  EXPECT_THAT(error_of("989TFLOPs", Dimension::kFlopRate), HasSubstr("did you mean \"989TFLOPS\"?"));
}

TEST(ParseQuantityErrors, UnitOfAnotherDimension) {
  EXPECT_THAT(error_of("2us", Dimension::kBandwidth),
              AllOf(HasSubstr("expected a bandwidth"), HasSubstr("found \"2us\", which is a duration, not a bandwidth"),
                    Not(HasSubstr("did you mean"))));
  EXPECT_THAT(error_of("80GiB", Dimension::kTime), HasSubstr("which is a size in bytes, not a duration"));
  EXPECT_THAT(error_of("100GB", Dimension::kBandwidth), HasSubstr("which is a size in bytes, not a bandwidth"));
  EXPECT_THAT(error_of("700W", Dimension::kFlopRate), HasSubstr("which is a power, not a FLOP rate"));
  EXPECT_THAT(error_of("15T", Dimension::kBytes), HasSubstr("which is a count, not a size in bytes"));
  EXPECT_THAT(error_of("400Gbps", Dimension::kCount), HasSubstr("which is a bandwidth, not a count"));
}

TEST(ParseQuantityErrors, Empty) {
  EXPECT_THAT(error_of("", Dimension::kTime),
              AllOf(HasSubstr("expected a duration such as \"2us\", \"30min\", \"50000h\" or seconds as a number"),
                    HasSubstr("found an empty string")));
  EXPECT_THAT(error_of("   ", Dimension::kBytes), HasSubstr("found an empty string"));
}

TEST(ParseQuantityErrors, NoNumber) {
  EXPECT_THAT(error_of("fast", Dimension::kBandwidth), HasSubstr("found \"fast\", which does not start with a number"));
  EXPECT_THAT(error_of("-", Dimension::kCount), HasSubstr("found \"-\", which does not start with a number"));
  EXPECT_THAT(error_of("+", Dimension::kCount), HasSubstr("does not start with a number"));
  EXPECT_THAT(error_of("+-5", Dimension::kCount), HasSubstr("does not start with a number"));
  EXPECT_THAT(error_of("GB/s", Dimension::kBandwidth), HasSubstr("does not start with a number"));
}

TEST(ParseQuantityErrors, TrailingGarbage) {
  EXPECT_THAT(error_of("10GB/s xyz", Dimension::kBandwidth),
              AllOf(HasSubstr("found \"10GB/s xyz\""), Not(HasSubstr("did you mean"))));
  EXPECT_THAT(error_of("5 5", Dimension::kCount), HasSubstr("found \"5 5\""));
  EXPECT_THAT(error_of("1.2.3", Dimension::kTime), HasSubstr("found \"1.2.3\""));
  EXPECT_THAT(error_of("10  GB/s", Dimension::kBandwidth), HasSubstr("found \"10  GB/s\""));  // two spaces
}

TEST(ParseQuantityErrors, NonFinite) {
  EXPECT_THAT(error_of("1e400GB/s", Dimension::kBandwidth), HasSubstr("found \"1e400GB/s\", which is out of range"));
  EXPECT_THAT(error_of("1e300PB", Dimension::kBytes), HasSubstr("which is out of range"));  // overflows when scaled
  EXPECT_THAT(error_of("nan", Dimension::kTime), HasSubstr("found \"nan\", which is not a finite number"));
  EXPECT_THAT(error_of("inf", Dimension::kPower), HasSubstr("which is not a finite number"));
  EXPECT_THAT(error_of("-infGB", Dimension::kBytes), HasSubstr("which is not a finite number"));
}

TEST(Describe, NamesEveryDimension) {
  EXPECT_EQ(describe(Dimension::kTime), "a duration");
  EXPECT_EQ(describe(Dimension::kBytes), "a size in bytes");
  EXPECT_EQ(describe(Dimension::kBandwidth), "a bandwidth");
  EXPECT_EQ(describe(Dimension::kFlopRate), "a FLOP rate");
  EXPECT_EQ(describe(Dimension::kPower), "a power");
  EXPECT_EQ(describe(Dimension::kCount), "a count");
}

TEST(Example, EveryExampleParses) {
  EXPECT_EQ(example(Dimension::kTime), "\"2us\", \"30min\", \"50000h\" or seconds as a number");
  for (const Dimension d : {Dimension::kTime, Dimension::kBytes, Dimension::kBandwidth, Dimension::kFlopRate,
                            Dimension::kPower, Dimension::kCount}) {
    // Each quoted example in the text must itself be a valid value.
    const std::string_view text = example(d);
    std::size_t open = text.find('"');
    ASSERT_NE(open, std::string_view::npos) << describe(d);
    while (open != std::string_view::npos) {
      const std::size_t close = text.find('"', open + 1);
      ASSERT_NE(close, std::string_view::npos);
      EXPECT_NO_THROW(static_cast<void>(parse_quantity(text.substr(open + 1, close - open - 1), d)))
          << text.substr(open + 1, close - open - 1);
      open = text.find('"', close + 1);
    }
  }
}

}  // namespace
}  // namespace trainsim::scenario
