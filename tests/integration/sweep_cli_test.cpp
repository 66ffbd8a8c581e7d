// End to end: `trainsim sweep` and `trainsim plan` on tests/integration/sweep_small.json
// (a 4-layer, 4-head model, global batch 16, on 8 A100 and on 16 H100).
#include <algorithm>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <iterator>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <unistd.h>

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
           ("trainsim_sweep_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) + "_" +
            std::to_string(::getpid()));
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

// Resuming (docs/sweep.md, "Resuming"): a run stopped during its evaluations, and
// again during its replays under failures, then resumed, writes the files of a
// run never stopped, byte for byte, and leaves no journal behind.
TEST_F(SweepCli, StoppedTwiceAndResumedWritesTheUninterruptedFiles) {
  const std::string whole = (dir_ / "whole").string();
  ASSERT_EQ(run("sweep " + kFailuresSpec + " --jobs 2 -q --out " + whole).exit_code, 0);
  const std::string out = (dir_ / "stopped").string();
  const fs::path journal = dir_ / "stopped" / "journal.jsonl";
  // One thread takes the points in order: 40 evaluated, then the stop.
  const Result first = run("sweep " + kFailuresSpec + " --jobs 1 -q --stop-after 40 --out " + out);
  ASSERT_EQ(first.exit_code, 3) << first.output;
  EXPECT_THAT(first.output, HasSubstr("--resume"));
  const nlohmann::json partial = nlohmann::json::parse(slurp(dir_ / "stopped" / "sweep.json"));
  EXPECT_EQ(partial["partial"]["points_done"], 40);
  EXPECT_EQ(partial["partial"]["stopped_by"], "--stop-after 40");
  EXPECT_EQ(partial["points"].size(), 40u);
  // The 120 points evaluate (80 more) and 1 of the 4 replays runs before the stop.
  const Result second = run("sweep " + kFailuresSpec + " --jobs 1 -q --resume --stop-after 81 --out " + out);
  ASSERT_EQ(second.exit_code, 3) << second.output;
  const nlohmann::json replaying = nlohmann::json::parse(slurp(dir_ / "stopped" / "sweep.json"));
  EXPECT_EQ(replaying["partial"]["points_done"], 120);
  EXPECT_EQ(replaying["partial"]["replays_done"], 1);
  EXPECT_EQ(replaying["partial"]["replays_total"], 4);
  std::ifstream lines(journal);
  EXPECT_EQ(std::count(std::istreambuf_iterator<char>(lines), std::istreambuf_iterator<char>(), '\n'), 121);
  const Result last = run("sweep " + kFailuresSpec + " --jobs 2 -q --resume --out " + out);
  ASSERT_EQ(last.exit_code, 0) << last.output;
  EXPECT_EQ(slurp(dir_ / "stopped" / "sweep.json"), slurp(dir_ / "whole" / "sweep.json"));
  EXPECT_EQ(slurp(dir_ / "stopped" / "points.csv"), slurp(dir_ / "whole" / "points.csv"));
  EXPECT_FALSE(fs::exists(journal));
}

TEST_F(SweepCli, PlanResumesFromItsJournalAndRefusesAnotherSpecs) {
  const std::string plan = (dir_ / "plan.json").string();
  ASSERT_EQ(run("plan " + kFailuresSpec + " --jobs 1 -q --stop-after 10 --out " + plan).exit_code, 3);
  ASSERT_TRUE(fs::exists(plan + ".journal"));
  const Result other = run("plan " + kSpec + " -q --resume --out " + plan);
  EXPECT_EQ(other.exit_code, 1);
  EXPECT_THAT(other.output, HasSubstr(plan + ".journal: line 1: written for another spec"));
  const Result resumed = run("plan " + kFailuresSpec + " -q --resume --out " + plan);
  ASSERT_EQ(resumed.exit_code, 0) << resumed.output;
  ASSERT_EQ(run("plan " + kFailuresSpec + " -q --out " + (dir_ / "whole.json").string()).exit_code, 0);
  EXPECT_EQ(slurp(plan), slurp(dir_ / "whole.json"));
  EXPECT_FALSE(fs::exists(plan + ".journal"));
}

// Ctrl-C: the points running finish, the outputs of those done are written and
// marked partial, the journal keeps them and the exit status is 128 + SIGINT.
TEST_F(SweepCli, SigintWritesPartialOutputsAndExits130) {
  const std::string spec = std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/sweeps/llama3-8b-small-cluster.json";
  const fs::path out = dir_ / "interrupted";
  const fs::path journal = out / "journal.jsonl";
  fs::create_directories(out);
  const pid_t pid = trainsim::cli_harness::spawn({"sweep", spec, "--jobs", "1", "-q", "--out", out.string()},
                                                 dir_ / "stdout.txt", dir_ / "stderr.txt");
  ASSERT_GT(pid, 0);
  // Signal once a point is in the journal (689 points: the run is far from done).
  trainsim::cli_harness::wait_until([&] { return fs::exists(journal) && fs::file_size(journal) > 0; }, 60.0);
  kill(pid, SIGINT);
  EXPECT_EQ(trainsim::cli_harness::exit_status(pid), 130) << slurp(dir_ / "stderr.txt");
  const nlohmann::json j = nlohmann::json::parse(slurp(out / "sweep.json"));
  EXPECT_EQ(j["partial"]["stopped_by"], "SIGINT");
  const std::size_t done = j["partial"]["points_done"];
  EXPECT_GE(done, 1u);
  EXPECT_LT(done, 689u);
  std::ifstream lines(journal);
  EXPECT_EQ(static_cast<std::size_t>(
                std::count(std::istreambuf_iterator<char>(lines), std::istreambuf_iterator<char>(), '\n')),
            done);
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
