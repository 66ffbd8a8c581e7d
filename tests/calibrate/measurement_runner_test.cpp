// The calibration harness's measurement runner (calibrate/measurement_runner.h),
// without a GPU: fake measurements through the journal, --resume and the
// fault-injection seam (fail or crash at the Nth measurement).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <stdexcept>
#include <string>

#include "io/append_log.h"
#include "measurement_runner.h"
#include "profile_writer.h"

namespace trainsim::calibrate {
namespace {

namespace fs = std::filesystem;

class Runner : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("trainsim_runner_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) + "_" +
            std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Ten measurements "m0".."m9", each a row {"i": i}; `measured` collects the ones actually run.
  static void calibrate_ten(MeasurementRunner& runner, std::set<int>* measured) {
    for (int i = 0; i < 10; ++i)
      runner.run("gemm", "m" + std::to_string(i), [&] {
        if (measured != nullptr) measured->insert(i);
        return nlohmann::json{{"i", i}};
      });
  }
  fs::path out() const { return dir_ / "profile.json"; }
  fs::path journal() const { return dir_ / "profile.json.journal"; }
  fs::path dir_;
};

TEST_F(Runner, CrashAtTheFourthKeepsThreeAndResumeMeasuresOnlyTheRest) {
  EXPECT_DEATH(
      {
        ProfileWriter profile(out(), {});
        MeasurementRunner runner(profile, journal(), false, FaultPlan::parse("crash@4"));
        calibrate_ten(runner, nullptr);
      },
      "crash@4: aborting before \"m3\"");
  EXPECT_EQ(io::read_log(journal()).lines.size(), 3u);
  ProfileWriter profile(out(), {});
  MeasurementRunner runner(profile, journal(), true);
  EXPECT_EQ(runner.resumed(), 3u);
  std::set<int> measured;
  calibrate_ten(runner, &measured);
  EXPECT_EQ(measured, (std::set<int>{3, 4, 5, 6, 7, 8, 9}));
  const nlohmann::json& rows = profile.profile()["gemm"];
  ASSERT_EQ(rows.size(), 10u);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(rows[static_cast<std::size_t>(i)]["i"], i);  // in order
  runner.remove_journal();
  EXPECT_FALSE(fs::exists(journal()));
}

TEST_F(Runner, AFailedMeasurementIsRecordedAndTheRunGoesOn) {
  ProfileWriter profile(out(), {});
  {
    MeasurementRunner runner(profile, journal(), false, FaultPlan::parse("fail@2"));
    std::set<int> measured;
    calibrate_ten(runner, &measured);
    EXPECT_EQ(measured.size(), 9u);
    EXPECT_FALSE(measured.contains(1));
  }
  EXPECT_EQ(profile.profile()["gemm"].size(), 9u);
  const nlohmann::json& errors = profile.profile()["errors"];
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0]["key"], "m1");
  EXPECT_EQ(errors[0]["section"], "gemm");
  EXPECT_NE(errors[0]["error"].get<std::string>().find("injected failure"), std::string::npos);
  // Resumed, the failed one is not tried again: its error is the record.
  ProfileWriter again(dir_ / "again.json", {});
  MeasurementRunner runner(again, journal(), true);
  std::set<int> measured;
  calibrate_ten(runner, &measured);
  EXPECT_TRUE(measured.empty());
  EXPECT_EQ(again.profile()["gemm"].size(), 9u);
  EXPECT_EQ(again.profile()["errors"].size(), 1u);
}

TEST_F(Runner, AnErrorThatBrokeTheDeviceIsRecordedThenEndsTheRun) {
  ProfileWriter profile(out(), {});
  MeasurementRunner runner(profile, journal(), false);
  EXPECT_THROW(runner.run(
                   "kernels", "k", []() -> nlohmann::json { throw std::runtime_error("an illegal memory access"); },
                   [] { return true; }),
               std::runtime_error);
  EXPECT_EQ(profile.profile()["errors"][0]["error"], "an illegal memory access");
  EXPECT_EQ(io::read_log(journal()).lines.size(), 1u);
}

TEST_F(Runner, ValuesAreJournaledAndRestoredToo) {
  {
    ProfileWriter profile(out(), {});
    MeasurementRunner runner(profile, journal(), false);
    runner.run_value("launch_overhead_s", "launch", [] { return nlohmann::json(2.5e-6); });
  }
  { std::ofstream(journal(), std::ios::app) << "{\"section\":\"ge"; }  // killed mid-line
  ProfileWriter profile(out(), {});
  MeasurementRunner runner(profile, journal(), true);
  EXPECT_EQ(profile.profile()["launch_overhead_s"], 2.5e-6);
  EXPECT_EQ(runner.run_value("launch_overhead_s", "launch", [] { return nlohmann::json(1.0); }),
            MeasurementRunner::Outcome::kFromJournal);
  runner.run("gemm", "g", [] { return nlohmann::json{{"i", 1}}; });
  EXPECT_EQ(io::read_log(journal()).lines.size(), 2u);  // the torn line cut off, the new one on a line of its own
  EXPECT_FALSE(io::read_log(journal()).torn);
}

TEST(FaultPlan, ParsesFailAndCrashAndRefusesTheRest) {
  EXPECT_EQ(FaultPlan::parse("fail@3").fail_at, 3);
  EXPECT_EQ(FaultPlan::parse("crash@12").crash_at, 12);
  for (const char* bad : {"fail", "fail@", "fail@0", "fail@x", "boom@2", "crash@2x"})
    EXPECT_THROW(FaultPlan::parse(bad), std::invalid_argument) << bad;
}

}  // namespace
}  // namespace trainsim::calibrate
