// Reading a shared cluster's workload file (docs/cluster.md, "The workload file"),
// and a job's iteration time from its own simulation.
#include <gtest/gtest.h>

#include "cluster/job_timing.h"
#include "cluster/outcome.h"
#include "scenario/cluster_workload_reader.h"
#include "scenario/errors.h"
#include "sweep/evaluate.h"

namespace trainsim {
namespace {

const std::string kCluster = R"("cluster": {"gpu": "H100-SXM5-80GB", "num_nodes": 8, "gpus_per_node": 8,
    "inter_node": {"topology": "fat_tree", "nics_per_node": 8, "nic_bandwidth": "400Gbps", "switch_radix": 32},
    "price_per_gpu_hour": 2.0})";
const std::string kSmall = R"({"model": {"num_layers": 2, "hidden_size": 1024, "num_attention_heads": 8,
    "seq_length": 512, "vocab_size": 32000}, "training": {"global_batch_size": 64, "micro_batch_size": 4,
    "precision": "bf16"}, "parallelism": {"dp": "auto"}, "simulation": {"network_model": "analytic"}})";

config::ClusterWorkload parse(const std::string& jobs, const std::string& scheduler = "") {
  return scenario::parse_cluster_workload_text(
      "{" + kCluster + (scheduler.empty() ? "" : ", " + scheduler) + R"(, "jobs": [)" + jobs + "]}", "w.json");
}

std::string error_of(const std::string& jobs, const std::string& scheduler = "") {
  try {
    parse(jobs, scheduler);
  } catch (const scenario::ScenarioError& e) {
    return e.what();
  }
  return "";
}

TEST(ClusterWorkload, JobsOnTheirShareOfTheCluster) {
  const config::ClusterWorkload w = parse(R"({"name": "a", "gpus": 16, "iterations": 10, "scenario": )" + kSmall +
                                          R"(}, {"name": "b", "gpus": 4, "arrival": "1h", "priority": 3,
                                             "train_tokens": 65536, "scenario": )" + kSmall + "}");
  ASSERT_EQ(w.jobs.size(), 2u);
  EXPECT_EQ(w.jobs[0].scenario.cluster.num_nodes, 2);
  EXPECT_EQ(w.jobs[0].scenario.parallel.data, 16);
  EXPECT_EQ(w.jobs[1].scenario.cluster.num_nodes, 1);
  EXPECT_EQ(w.jobs[1].scenario.cluster.gpus_per_node, 4);
  EXPECT_DOUBLE_EQ(w.jobs[1].arrival_s, 3600.0);
  EXPECT_EQ(w.jobs[1].priority, 3);
  // 65536 tokens / (64 sequences x 512 tokens) = 2 iterations.
  EXPECT_EQ(w.jobs[1].iterations, 2);
  EXPECT_NE(w.jobs[0].scenario_key, w.jobs[1].scenario_key);  // their clusters differ
}

TEST(ClusterWorkload, ErrorsNameTheJobAndThePath) {
  EXPECT_NE(error_of(R"({"name": "a", "gpus": 12, "iterations": 1, "scenario": )" + kSmall + "}")
                .find("w.json: /jobs/0/gpus: expected up to 8 GPUs on one node, or whole nodes"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"name": "a", "gpus": 8, "iterations": 1, "scenario": )" + kSmall +
                     R"(}, {"name": "a", "gpus": 8, "iterations": 1, "scenario": )" + kSmall + "}")
                .find("/jobs/1/name"),
            std::string::npos);
  const std::string bad_tp = R"({"name": "a", "gpus": 8, "iterations": 1, "scenario": {"model": "llama3-8b",
      "training": {"global_batch_size": 8}, "parallelism": {"tp": 3}}})";
  EXPECT_NE(error_of(bad_tp).find("w.json: /jobs/0/scenario/parallelism/"), std::string::npos) << error_of(bad_tp);
  EXPECT_NE(error_of(R"({"name": "a", "gpus": 8, "scenario": )" + kSmall + "}").find("/jobs/0/iterations"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"name": "a", "gpus": 8, "iterations": 1, "scenario": )" + kSmall + "}",
                     R"("scheduler": {"policy": "fifo", "preemption": true})")
                .find("preemption needs policy \"priority\""),
            std::string::npos);
  EXPECT_NE(error_of(R"({"name": "a", "gpus": 8, "iterations": 1, "scenario": "missing.json"})").find("missing.json"),
            std::string::npos);
}

TEST(ClusterWorkload, AJobIsTimedByItsOwnSimulation) {
  const config::ClusterWorkload w =
      parse(R"({"name": "a", "gpus": 16, "iterations": 100, "scenario": )" + kSmall +
            R"(}, {"name": "b", "gpus": 16, "arrival": 1, "iterations": 50, "scenario": )" + kSmall + "}");
  cluster::JobTiming timing(w, 1);
  // Both jobs run the same scenario on the same placement shape: one simulation.
  EXPECT_EQ(timing.simulations(), 1u);
  sweep::PointResult direct;
  sweep::time_point(w.jobs[0].scenario, direct);
  // Alone, two nodes under one leaf (radix 32: 2 nodes a leaf), as the scenario packs them.
  EXPECT_DOUBLE_EQ(timing.alone(0).iteration_s, direct.iteration_time_s);
  const cluster::ScheduleResult r = cluster::run_schedule(w, timing.timer());
  const cluster::ClusterFigures f = cluster::cluster_figures(w, timing, r);
  // 64 GPUs, 32 in use: both start at once and run alone.
  EXPECT_DOUBLE_EQ(r.jobs[0].end_s, 100 * direct.iteration_time_s);
  EXPECT_DOUBLE_EQ(f.jobs[1].slowdown, 1.0);
  EXPECT_DOUBLE_EQ(f.jobs[0].gpu_hours, 16 * 100 * direct.iteration_time_s / 3600.0);
  EXPECT_DOUBLE_EQ(*f.jobs[0].cost_usd, 2.0 * f.jobs[0].gpu_hours);
  EXPECT_DOUBLE_EQ(f.jobs[0].goodput, 1.0);
}

}  // namespace
}  // namespace trainsim
