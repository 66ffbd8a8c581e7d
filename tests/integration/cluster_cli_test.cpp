// End to end: `trainsim cluster` on the shipped example scenarios/cluster/h100-512-shared.json.
#include <filesystem>
#include <fstream>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <string>
#include <unistd.h>

#include "cli_harness.h"

namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using trainsim::cli_harness::Result;
using trainsim::cli_harness::run;
using trainsim::cli_harness::slurp;

const std::string kWorkload = std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/cluster/h100-512-shared.json";

TEST(ClusterCli, WritesTheFilesAndTheSameTwice) {
  const fs::path dir = fs::temp_directory_path() / (std::string("trainsim_cluster_cli_") + std::to_string(::getpid()));
  fs::remove_all(dir);
  const Result a = run("cluster -q " + kWorkload + " --out " + (dir / "a").string());
  ASSERT_EQ(a.exit_code, 0) << a.output;
  const Result b = run("cluster -q " + kWorkload + " --jobs 1 --out " + (dir / "b").string());
  ASSERT_EQ(b.exit_code, 0) << b.output;
  // Deterministic, whatever the threads.
  for (const char* f : {"cluster.json", "jobs.csv", "usage.csv", "cluster.timeline.json"})
    EXPECT_EQ(slurp(dir / "a" / f), slurp(dir / "b" / f));
  const nlohmann::json j = nlohmann::json::parse(slurp(dir / "a" / "cluster.json"));
  EXPECT_EQ(j["num_gpus"], 512);
  EXPECT_EQ(j["jobs"].size(), 6u);
  // The 70B job starts on the empty cluster and runs alone: its slowdown is 1.
  EXPECT_DOUBLE_EQ(j["jobs"][0]["queue_s"].get<double>(), 0.0);
  EXPECT_NEAR(j["jobs"][0]["slowdown"].get<double>(), 1.0, 1e-12);
  fs::remove_all(dir);
}

TEST(ClusterCli, ComparesThePolicies) {
  const Result r = run("cluster " + kWorkload + " --compare");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("fifo, topology_aware"));
  EXPECT_THAT(r.output, HasSubstr("backfill, topology_aware"));
  EXPECT_THAT(r.output, HasSubstr("priority, topology_aware"));
}

TEST(ClusterCli, BadFilesNameTheFieldAndExitOne) {
  const fs::path bad = fs::temp_directory_path() / ("trainsim_cluster_bad_" + std::to_string(::getpid()) + ".json");
  std::ofstream(bad) << R"({"cluster": {"gpu": "H100-SXM5-80GB", "num_nodes": 2}, "jobs": [
      {"name": "x", "gpus": 24, "iterations": 1, "scenario": {"model": "gpt2-124m", "training": {"global_batch_size": 8}}}]})";
  const Result r = run("cluster " + bad.string());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.output, HasSubstr("/jobs/0/gpus: expected an integer from 1 to 16"));
  fs::remove(bad);
}

}  // namespace
