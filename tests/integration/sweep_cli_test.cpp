// End to end: `trainsim sweep` and `trainsim plan` on tests/integration/sweep_small.json
// (a 4-layer, 4-head model, global batch 16, on 8 A100 and on 16 H100).
#include <filesystem>
#include <fstream>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "cli_harness.h"

namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

using trainsim::cli_harness::Result;
using trainsim::cli_harness::run;
using trainsim::cli_harness::slurp;

const std::string kSpec = std::string(TRAINSIM_SOURCE_DIR) + "/tests/integration/sweep_small.json";

class SweepCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("trainsim_sweep_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(SweepCli, CountsOfTheSpaceDerivedByHand) {
  const Result r = run("sweep " + kSpec + " --out " + (dir_ / "a").string() + " --top 2 --jobs 2");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const nlohmann::json j = nlohmann::json::parse(slurp(dir_ / "a" / "sweep.json"));
  const nlohmann::json& c = j["counts"];
  // tp and pp auto: {1, 2, 4} each on both clusters; x cp 2 x mbs 2 x zero 2 x recompute 2.
  EXPECT_EQ(c["combinations"], 2 * 144);
  // tp x pp x cp = 16 or 32 on 8 GPUs (4 triples), 32 on 16 GPUs (1 triple); x 8.
  EXPECT_EQ(c["pruned"]["tp x pp x cp does not divide the GPUs"], 40);
  // dp 16 with mbs 2 on the 16 H100; x zero x recompute.
  EXPECT_EQ(c["pruned"]["micro_batch_size x dp does not divide global_batch_size"], 4);
  // dp 1: 5 triples on 8 GPUs, 3 on 16; zero 1 x mbs 2 x recompute 2.
  EXPECT_EQ(c["pruned"]["redundant: zero_stage > 0 with dp 1 is zero_stage 0"], 32);
  // The rest run: 288 - 40 - 4 - 32, of which cp 2 in 36 + 56 points.
  EXPECT_EQ(c["evaluated"], 212);
  EXPECT_EQ(c["does_not_fit"], 0);
  EXPECT_EQ(j["ranking"].size(), 212u);
  EXPECT_EQ(j["points"].size(), 212u);
  // The CSV: a header and a row per listed point.
  const std::string csv = slurp(dir_ / "a" / "points.csv");
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 213);
  // The best two, re-simulated with their traces; the result has the contract keys.
  const nlohmann::json best = nlohmann::json::parse(slurp(dir_ / "a" / "top" / ("01-point" + std::to_string(j["ranking"][0].get<int>()) + ".json")));
  for (const char* key : {"iteration_time_s", "tokens_per_s", "mfu", "breakdown_s", "memory", "time_to_train_s",
                          "cost_usd", "energy_kwh"})
    EXPECT_TRUE(best.contains(key)) << key;
  EXPECT_THAT(r.output, HasSubstr("Pareto front"));
}

TEST_F(SweepCli, ByteIdenticalForAnyThreadCount) {
  ASSERT_EQ(run("sweep -q " + kSpec + " --out " + (dir_ / "one").string() + " --jobs 1").exit_code, 0);
  ASSERT_EQ(run("sweep -q " + kSpec + " --out " + (dir_ / "three").string() + " --jobs 3").exit_code, 0);
  EXPECT_EQ(slurp(dir_ / "one" / "points.csv"), slurp(dir_ / "three" / "points.csv"));
  EXPECT_EQ(slurp(dir_ / "one" / "sweep.json"), slurp(dir_ / "three" / "sweep.json"));
}

TEST_F(SweepCli, PlanHasABestLayoutPerCluster) {
  const Result r = run("plan " + kSpec + " --out " + (dir_ / "plan.json").string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("8 A100"));
  EXPECT_THAT(r.output, HasSubstr("16 H100"));
  // The table's columns line up however long the layouts are: each row's
  // iteration time ends where the header's "iteration" does.
  std::istringstream lines(r.output);
  std::string line;
  std::size_t iteration_end = std::string::npos;
  int rows = 0;
  while (std::getline(lines, line)) {
    if (line.starts_with("cluster ")) iteration_end = line.find("iteration") + std::string_view("iteration").size();
    if (iteration_end == std::string::npos || !(line.starts_with("8 A100") || line.starts_with("16 H100"))) continue;
    ++rows;
    ASSERT_GT(line.size(), iteration_end) << line;
    EXPECT_EQ(line[iteration_end - 1], 's') << line;  // "12.62 s", right-aligned
    EXPECT_EQ(line[iteration_end], ' ') << line;
  }
  EXPECT_EQ(rows, 2) << r.output;
  const nlohmann::json j = nlohmann::json::parse(slurp(dir_ / "plan.json"));
  ASSERT_EQ(j["options"].size(), 2u);
  for (const auto& o : j["options"]) {
    EXPECT_FALSE(o["best"].is_null());
    EXPECT_EQ(o["time_to_train_s"]["p50"], o["time_to_train_s"]["p90"]);  // no failures section
    EXPECT_GT(o["cost_usd"].get<double>(), 0.0);
    EXPECT_TRUE(o["bottleneck"]["name"].is_string());
  }
}

const std::string kFailuresSpec = std::string(TRAINSIM_SOURCE_DIR) + "/tests/integration/sweep_small_failures.json";

TEST_F(SweepCli, PlanUnderFailuresHasP50AndP90AndIsTheSameOnAnyThreadCount) {
  const Result one = run("plan " + kFailuresSpec + " --jobs 1 --out " + (dir_ / "one.json").string());
  ASSERT_EQ(one.exit_code, 0) << one.output;
  const Result two = run("plan " + kFailuresSpec + " --jobs 2 --out " + (dir_ / "two.json").string());
  ASSERT_EQ(two.exit_code, 0) << two.output;
  EXPECT_THAT(one.output, HasSubstr("goodput"));
  EXPECT_EQ(slurp(dir_ / "one.json"), slurp(dir_ / "two.json"));
  const nlohmann::json j = nlohmann::json::parse(slurp(dir_ / "one.json"));
  EXPECT_EQ(j["failures_modeled"], true);
  EXPECT_EQ(j["failures"]["replay_top_k"], 2);
  for (const auto& o : j["options"]) {
    const double p50 = o["time_to_train_s"]["p50"];
    EXPECT_GE(o["time_to_train_s"]["p90"].get<double>(), p50);
    // 1B tokens take about two minutes: a node MTBF of 10 min interrupts some trials.
    EXPECT_GT(p50, o["reliability"]["failure_free_time_to_train_s"].get<double>());
    EXPECT_GT(o["reliability"]["expected_interruptions"].get<double>(), 0.0);
  }
}

TEST_F(SweepCli, BadSpecNamesThePath) {
  const fs::path bad = dir_ / "bad.json";
  std::ofstream(bad) << R"({"model": "gpt2-124m", "training": {"global_batch_size": 8, "train_tokens": 1e6},
                            "clusters": [{"gpu": "A100-SXM4-80GB"}], "space": {"zero_stage": [5]}})";
  const Result r = run("sweep " + bad.string() + " --out " + (dir_ / "x").string());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.output, HasSubstr("/space/zero_stage"));
}

}  // namespace
