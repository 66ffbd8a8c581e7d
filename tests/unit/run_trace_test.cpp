// The run-level events in the Perfetto trace (report/timeline_writer.h,
// write_trace with a full run): the written JSON is parsed back and checked
// against the run timeline of the same trial and against closed forms on a
// small GPT-2 scenario (docs/results.md, "Perfetto trace").
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "execution/full_run.h"
#include "execution/simulate.h"
#include "report/run_timeline.h"
#include "report/timeline_writer.h"
#include "scenario/reader.h"

namespace trainsim::report {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// GPT-2 124M data parallel on one node of 8 H100 (as in full_run_test.cpp).
config::Scenario gpt2(const std::string& failures, const std::string& tokens) {
  return scenario::parse_scenario_text(
      R"({"cluster": {"gpu": "H100-SXM5-80GB", "num_nodes": 1}, "model": "gpt2-124m",
          "training": {"global_batch_size": 64, "micro_batch_size": 4, "train_tokens": )" +
          tokens + R"(}, "parallelism": {"overlap_grad_reduce": false},
          "simulation": {"network_model": "analytic"}, "failures": )" + failures + "}",
      "test.json");
}

json read_json(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return json::parse(ss.str());
}

struct Traced {
  exec::FullRunReport full_run;
  json trace;     // traceEvents of the job process
  json timeline;  // the run timeline's spans
  long long job_pid = 0;
};

Traced trace_of(const config::Scenario& s, const std::string& tag) {
  const exec::SimulationOutput out = exec::simulate(s);
  Traced t{exec::simulate_full_run(s, out), json::array(), json::array(), s.cluster.num_gpus() + 1};
  const fs::path dir = fs::temp_directory_path() / ("trainsim_run_trace_test_" + tag + "_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  write_trace(dir / "trace.json", s, out, {0}, &t.full_run);
  write_run_timeline(dir / "run_timeline.json", s, t.full_run);
  const json trace = read_json(dir / "trace.json");
  for (const json& e : trace["traceEvents"])
    if (e["pid"] == t.job_pid) t.trace.push_back(e);
  t.timeline = read_json(dir / "run_timeline.json")["lanes"][0]["spans"];
  fs::remove_all(dir);
  return t;
}

// Spans (ph X) of one track and category ("" for all), in file order.
std::vector<json> spans(const json& events, int tid, const std::string& category = "") {
  std::vector<json> v;
  for (const json& e : events)
    if (e["ph"] == "X" && e["tid"] == tid && (category.empty() || e["cat"] == category)) v.push_back(e);
  return v;
}

double seconds(const json& micros) { return micros.get<double>() * 1e-6; }

TEST(RunTrace, MaintenanceWindowSplitsIntoWindowRestartAndReloadAtTheirClosedFormTimes) {
  // No failures; a maintenance window every 60 s of 20 s, restart 30 s; the
  // checkpoint (124.4M parameters x 14 B = 1.74 GB) written and read at 10 GB/s.
  const config::Scenario s = gpt2(R"({"failures_per_1000_node_days": 0, "maintenance_interval": "60s",
                                        "maintenance_duration": "20s", "restart_overhead": "30s",
                                        "checkpoint_write_bandwidth": "10GB/s", "trials": 1})",
                                    "2e8");
  const Traced t = trace_of(s, "maintenance");
  const faults::TrialResult& trial = t.full_run.monte_carlo.per_trial.front();
  const double d = t.full_run.checkpoint_size.total_bytes / 10e9;  // write = reload
  ASSERT_GT(trial.maintenance_stops, 0);

  // Process and track names.
  std::map<int, std::string> tracks;
  for (const json& e : t.trace)
    if (e["ph"] == "M" && e["name"] == "thread_name") tracks[e["tid"].get<int>()] = e["args"]["name"];
  EXPECT_EQ(tracks, (std::map<int, std::string>{{0, "job"}, {1, "degraded link"}, {2, "checkpoint storage"}}));

  const std::vector<json> windows = spans(t.trace, 0, "maintenance");
  const std::vector<json> restarts = spans(t.trace, 0, "restart");
  const std::vector<json> reloads = spans(t.trace, 0, "reload");
  ASSERT_EQ(windows.size(), static_cast<std::size_t>(trial.maintenance_stops));
  ASSERT_EQ(restarts.size(), windows.size());
  ASSERT_EQ(reloads.size(), windows.size());
  for (std::size_t k = 0; k < windows.size(); ++k) {
    SCOPED_TRACE(k);
    // Every window closes on the schedule, 20 s after a multiple of 60 s; the
    // restart and the reload follow it.
    const double end = seconds(windows[k]["ts"]) + seconds(windows[k]["dur"]);
    EXPECT_NEAR(std::remainder(end - 20.0, 60.0), 0.0, 1e-9);
    EXPECT_NEAR(seconds(restarts[k]["ts"]), end, 1e-9);
    EXPECT_NEAR(seconds(restarts[k]["dur"]), 30.0, 1e-9);
    EXPECT_NEAR(seconds(reloads[k]["ts"]), end + 30.0, 1e-9);
    EXPECT_NEAR(seconds(reloads[k]["dur"]), d, 1e-9);
  }
  // The first window opens after the checkpoint that ends the first iteration
  // finishing at or after 60 s, and closes at 80 s.
  const double it = t.full_run.iteration_time_s;
  const double first_stop = std::ceil(60.0 / it) * it;
  EXPECT_NEAR(seconds(windows[0]["ts"]), first_stop + d, 1e-6);
  EXPECT_NEAR(seconds(windows[0]["ts"]) + seconds(windows[0]["dur"]), 80.0, 1e-9);
  EXPECT_TRUE(spans(t.trace, 0, "detection").empty());
  EXPECT_TRUE(spans(t.trace, 2).empty());  // blocking checkpoints only
}

TEST(RunTrace, FailuresAreInstantsAndRecoveriesMatchTheRunTimeline) {
  // One node failing every 30 min on average over about 4 h of training: a few
  // dozen failures (many during a recovery), each detected in 10 min, restarted
  // in 10 min, reloaded at 10 GB/s.
  const config::Scenario s = gpt2(R"({"node_mtbf": "30min", "checkpoint_write_bandwidth": "10GB/s",
                                        "seed": 3, "trials": 1})",
                                    "1e11");
  const Traced t = trace_of(s, "failures");
  const faults::TrialResult& trial = t.full_run.monte_carlo.per_trial.front();
  ASSERT_GT(trial.interruptions, 5);
  ASSERT_LT(trial.events.size(), 20000u);  // nothing capped
  const double d = t.full_run.checkpoint_size.total_bytes / 10e9;

  // One instant per interruption, failures during a recovery included.
  std::vector<double> instants;
  for (const json& e : t.trace)
    if (e["ph"] == "i") {
      EXPECT_EQ(e["tid"], 0);
      EXPECT_EQ(e["name"], "node failure");
      instants.push_back(seconds(e["ts"]));
    }
  EXPECT_EQ(static_cast<long long>(instants.size()), trial.interruptions);

  // The run timeline's failure spans are the trace's detection spans, 10 min each,
  // each starting at a failure instant.
  std::vector<json> detections = spans(t.trace, 0, "detection");
  std::vector<json> failures, recoveries;
  for (const json& e : t.timeline) {
    if (e["category"] == "failure") failures.push_back(e);
    if (e["category"] == "restart") recoveries.push_back(e);
  }
  ASSERT_EQ(detections.size(), failures.size());
  for (std::size_t k = 0; k < failures.size(); ++k) {
    SCOPED_TRACE(k);
    EXPECT_NEAR(seconds(detections[k]["ts"]), failures[k]["start"].get<double>(), 1e-6);
    EXPECT_NEAR(seconds(detections[k]["dur"]), 600.0, 1e-9);
    EXPECT_NE(std::find_if(instants.begin(), instants.end(),
                           [&](double x) { return std::abs(x - seconds(detections[k]["ts"])) < 1e-9; }),
              instants.end());
  }
  // Each recovery of the run timeline is down (if any), then a 10 min restart, then a reload of d.
  const std::vector<json> restarts = spans(t.trace, 0, "restart");
  const std::vector<json> reloads = spans(t.trace, 0, "reload");
  ASSERT_EQ(restarts.size(), recoveries.size());
  ASSERT_EQ(reloads.size(), recoveries.size());
  for (std::size_t k = 0; k < recoveries.size(); ++k) {
    SCOPED_TRACE(k);
    const double end = recoveries[k]["end"].get<double>();
    EXPECT_NEAR(seconds(reloads[k]["dur"]), d, 1e-9);
    EXPECT_NEAR(seconds(reloads[k]["ts"]) + seconds(reloads[k]["dur"]), end, 1e-6);
    EXPECT_NEAR(seconds(restarts[k]["dur"]), 600.0, 1e-9);
    EXPECT_NEAR(seconds(restarts[k]["ts"]) + 600.0, seconds(reloads[k]["ts"]), 1e-6);
  }

  // The job track tiles the run: each span starts where the last ended, and the
  // categories add up to the trial's accounting.
  const std::vector<json> job = spans(t.trace, 0);
  double at = 0.0;
  std::map<std::string, double> by_category;
  for (const json& e : job) {
    EXPECT_NEAR(seconds(e["ts"]), at, 1e-6);
    at = seconds(e["ts"]) + seconds(e["dur"]);
    by_category[e["cat"]] += seconds(e["dur"]);
  }
  EXPECT_NEAR(at, core::to_seconds(trial.wall), 1e-6);
  EXPECT_NEAR(by_category["train"], core::to_seconds(trial.running), 1e-5);
  EXPECT_NEAR(by_category["checkpoint"], core::to_seconds(trial.checkpointing), 1e-5);
  EXPECT_NEAR(by_category["detection"] + by_category["down"] + by_category["restart"] + by_category["reload"],
              core::to_seconds(trial.down), 1e-5);
}

}  // namespace
}  // namespace trainsim::report
