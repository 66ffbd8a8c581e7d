// Reading a shared cluster's workload file (docs/cluster.md, "The workload file"),
// and a job's iteration time from its own simulation.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "cluster/best_layout.h"
#include "cluster/job_timing.h"
#include "cluster/outcome.h"
#include "scenario/cluster_workload_reader.h"
#include "scenario/errors.h"
#include "scenario/job_trace.h"
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
  // A file it cannot read is named, and so are the workload and the job that name it.
  const std::string missing = error_of(R"({"name": "a", "gpus": 8, "iterations": 1, "scenario": "missing.json"})");
  EXPECT_NE(missing.find("w.json: /jobs/0/scenario: missing.json: expected an existing scenario file"),
            std::string::npos)
      << missing;
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

namespace trainsim {
namespace {

// The three example rows of the Helios README (github.com/S-Lab-System-Group/HeliosData),
// a 12-GPU job (whole nodes: 16 GPUs), a CPU job and one a day after the window.
const std::string kHelios =
    "job_id,user,vc,gpu_num,cpu_num,node_num,state,submit_time,start_time,end_time,duration,queue\n"
    "1425511,uXBbc,vcJkd,1,1,1,COMPLETED,2020-06-09 18:41:01,2020-06-09 18:41:01,2020-06-10 04:55:09,36848,0\n"
    "1425512,uVMrF,vchbv,4,16,1,FAILED,2020-06-09 18:41:27,2020-06-09 18:41:27,2020-06-09 18:45:36,249,0\n"
    "1425513,uzqls,vcpDC,1,1,1,CANCELLED,2020-06-09 18:41:28,2020-06-09 18:41:28,2020-06-17 14:15:21,675233,0\n"
    "1425514,u1,vc1,12,48,2,COMPLETED,2020-06-09 18:42:01,2020-06-09 19:00:00,2020-06-09 20:00:00,3600,1079\n"
    "1425515,u1,vc1,0,8,1,COMPLETED,2020-06-09 18:43:01,2020-06-09 18:43:01,2020-06-09 18:44:01,60,0\n"
    "1425516,u1,vc1,8,8,1,COMPLETED,2020-06-10 18:41:02,2020-06-10 18:41:02,2020-06-10 18:44:02,180,0\n";

TEST(JobTrace, HeliosRowsAndTimes) {
  EXPECT_DOUBLE_EQ(*scenario::parse_trace_time("2020-06-09 18:41:01"), 1591728061.0);
  EXPECT_FALSE(scenario::parse_trace_time("2020-13-09 18:41:01"));
  const std::vector<scenario::TraceJob> rows = scenario::parse_helios_log(kHelios, "log.csv");
  ASSERT_EQ(rows.size(), 6u);
  EXPECT_EQ(rows[0].id, "1425511");
  EXPECT_DOUBLE_EQ(rows[0].duration_s, 36848.0);  // the README's duration column
  EXPECT_EQ(rows[1].gpus, 4);
  EXPECT_EQ(rows[1].state, "FAILED");
  try {
    scenario::parse_helios_log("job_id,gpu_num\n1,2\n", "log.csv");
    FAIL();
  } catch (const scenario::ScenarioError& e) {
    EXPECT_NE(std::string(e.what()).find("log.csv: line 1: expected a header with the column \"node_num\""),
              std::string::npos);
  }
  try {
    scenario::parse_helios_log(
        "job_id,gpu_num,node_num,state,submit_time,start_time,end_time\n1,2,1,X,2020-06-09,2020-06-09 1:00:00,x\n",
        "log.csv");
    FAIL();
  } catch (const scenario::ScenarioError& e) {
    EXPECT_NE(std::string(e.what()).find("line 2, submit_time"), std::string::npos) << e.what();
  }
}

TEST(JobTrace, ReplayedOnTemplatesAsLongAsTheJobsRan) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / ("trainsim-trace-test-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "log.csv") << kHelios;
  const std::string text = "{" + kCluster + R"(, "trace": {"format": "helios", "path": "log.csv", "days": 1,
      "templates": [{"max_gpus": 64, "scenario": )" + kSmall + "}]}}";
  config::ClusterWorkload w = scenario::parse_cluster_workload_text(text, (dir / "w.json").string());
  std::filesystem::remove_all(dir);
  ASSERT_EQ(w.jobs.size(), 4u);  // not the CPU job, nor the one a day later
  EXPECT_EQ(w.jobs[0].name, "trace:1425511");
  EXPECT_DOUBLE_EQ(w.jobs[1].arrival_s, 26.0);
  EXPECT_EQ(w.jobs[3].gpus, 16);  // 12 GPUs take two whole 8-GPU nodes
  ASSERT_EQ(w.notes.size(), 1u);
  EXPECT_EQ(w.notes[0], "1 trace jobs left out: no GPUs (CPU jobs)");
  cluster::JobTiming timing(w, 1);
  cluster::resolve_trace_lengths(w, timing);
  EXPECT_EQ(w.jobs[0].iterations, std::llround(36848.0 / timing.alone(0).iteration_s));
}

}  // namespace
}  // namespace trainsim

namespace trainsim {
namespace {

TEST(ClusterContention, AShareOfTheUplinksIsAThinnerTree) {
  // Radix 32: 2 nodes a leaf. 32 GPUs of data parallelism take 4 nodes under 2 leaves.
  std::string scenario = kSmall;
  const std::string gbs = "\"global_batch_size\": 64";
  scenario.replace(scenario.find(gbs), gbs.size(), "\"global_batch_size\": 256");
  const config::ClusterWorkload w =
      parse(R"({"name": "a", "gpus": 32, "iterations": 10, "scenario": )" + scenario + "}");
  cluster::JobTiming timing(w, 1);
  const cluster::Placement& p = timing.alone_placement(0);
  EXPECT_EQ(p.nodes, (std::vector<int>{0, 1, 2, 3}));
  // Its all-reduce leaves both leaves through their uplinks.
  const cluster::GroupDuty duty = timing.traffic(0, p);
  ASSERT_EQ(duty.size(), 2u);
  EXPECT_GT(duty.at(0), 0.0);
  EXPECT_LE(duty.at(0), 1.0);
  EXPECT_DOUBLE_EQ(duty.at(0), duty.at(1));
  // Half of each leaf's uplinks is the same network as a tree twice as oversubscribed.
  const cluster::JobPace half = timing.shared_pace(0, p, {{0, 0.5}, {1, 0.5}});
  config::Scenario thinner = w.jobs[0].scenario;
  thinner.cluster.inter_node.oversubscription = 2.0;
  thinner.cluster.inter_node.node_groups = {0, 0, 1, 1};
  thinner.cluster.inter_node.tiers = 2;
  sweep::PointResult r;
  sweep::time_point(thinner, r);
  EXPECT_DOUBLE_EQ(half.iteration_s, r.iteration_time_s);
  EXPECT_GT(half.iteration_s, timing.alone(0).iteration_s);
  // No share given: the pace alone.
  EXPECT_DOUBLE_EQ(timing.shared_pace(0, p, {}).iteration_s, timing.alone(0).iteration_s);
}

}  // namespace
}  // namespace trainsim

namespace trainsim {
namespace {

TEST(ClusterWorkload, ElasticJobsRunAtTheSizesTheirLayoutAllows) {
  // Global batch 96, micro-batch 4: data-parallel sizes 8 (3 micro-batches) and 24 (1)
  // divide it, 16 does not and is skipped.
  std::string scenario = kSmall;
  const std::string gbs = "\"global_batch_size\": 64";
  scenario.replace(scenario.find(gbs), gbs.size(), "\"global_batch_size\": 96");
  const config::ClusterWorkload w =
      parse(R"({"name": "e", "gpus": {"min": 8, "max": 24}, "iterations": 10, "scenario": )" + scenario + "}");
  const config::ClusterJob& e = w.jobs[0];
  ASSERT_EQ(e.elastic.size(), 2u);
  EXPECT_EQ(e.elastic[0].gpus, 8);
  EXPECT_EQ(e.elastic[0].scenario.parallel.data, 8);
  EXPECT_EQ(e.elastic[1].gpus, 24);
  EXPECT_EQ(e.gpus, 24);
  EXPECT_EQ(e.min_gpus(), 8);
  EXPECT_EQ(e.sizes_largest_first(), (std::vector<int>{24, 8}));
  // The ends must be valid: 16 GPUs is the reader's error at the job's scenario.
  EXPECT_NE(error_of(R"({"name": "e", "gpus": {"min": 8, "max": 16}, "iterations": 1, "scenario": )" + scenario + "}")
                .find("/jobs/0/scenario/training/global_batch_size"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"name": "e", "gpus": {"min": 4, "max": 16}, "iterations": 1, "scenario": )" + kSmall + "}")
                .find("/jobs/0/gpus/min"),
            std::string::npos);
}

}  // namespace
}  // namespace trainsim

namespace trainsim {
namespace {

TEST(ClusterWorkload, BestLayoutAtEachSizeFromTheSweep) {
  // Sizes 8 and 16 GPUs; the space tries TP 1 and 2. The layout chosen at each size
  // is the faster of the two, timed as `trainsim run` times them.
  const config::ClusterWorkload read = parse(R"({"name": "e", "gpus": {"min": 8, "max": 16}, "iterations": 10,
      "layout_space": {"tp": [1, 2]}, "scenario": )" + kSmall + "}");
  config::ClusterWorkload w = read;
  ASSERT_TRUE(w.jobs[0].layout_search);
  EXPECT_EQ(w.jobs[0].layout_search->clusters.size(), 2u);
  cluster::resolve_best_layouts(w, 1);
  ASSERT_EQ(w.jobs[0].elastic.size(), 2u);
  for (const config::ClusterJob::Size& size : w.jobs[0].elastic) {
    double fastest = 1e300;
    for (int tp : {1, 2}) {
      std::string scenario = kSmall;
      const std::string dp = "\"dp\": \"auto\"";
      scenario.replace(scenario.find(dp), dp.size(), dp + ", \"tp\": " + std::to_string(tp));
      const config::ClusterWorkload one = parse(R"({"name": "f", "gpus": )" + std::to_string(size.gpus) +
                                                R"(, "iterations": 1, "scenario": )" + scenario + "}");
      sweep::PointResult r;
      sweep::time_point(one.jobs[0].scenario, r);
      fastest = std::min(fastest, r.iteration_time_s);
    }
    sweep::PointResult chosen;
    sweep::time_point(size.scenario, chosen);
    EXPECT_DOUBLE_EQ(chosen.iteration_time_s, fastest) << size.gpus << " GPUs: " << size.layout;
    EXPECT_FALSE(size.layout.empty());
  }
  EXPECT_NE(error_of(R"({"name": "e", "gpus": 8, "iterations": 1, "layout_space": {"tp": [0]}, "scenario": )" +
                     kSmall + "}")
                .find("w.json: /jobs/0/layout_space/tensor_model_parallel_size"),
            std::string::npos)
      << error_of(R"({"name": "e", "gpus": 8, "iterations": 1, "layout_space": {"tp": [0]}, "scenario": )" + kSmall +
                  "}");
}

}  // namespace
}  // namespace trainsim

namespace trainsim {
namespace {

TEST(ClusterContention, PodsShareTheirCoreUplinksInAThreeTierTree) {
  // Radix 16: one 8-NIC node a leaf, 8 leaves a pod, 64 nodes: 3 tiers. 16 nodes of
  // data parallelism fill two pods; their all-reduce crosses the cores.
  const std::string cluster = R"("cluster": {"gpu": "H100-SXM5-80GB", "num_nodes": 64, "gpus_per_node": 8,
      "inter_node": {"topology": "fat_tree", "nics_per_node": 8, "nic_bandwidth": "400Gbps", "switch_radix": 16}})";
  std::string scenario = kSmall;
  const std::string gbs = "\"global_batch_size\": 64";
  scenario.replace(scenario.find(gbs), gbs.size(), "\"global_batch_size\": 512");
  const config::ClusterWorkload w = scenario::parse_cluster_workload_text(
      "{" + cluster + R"(, "jobs": [{"name": "a", "gpus": 128, "iterations": 10, "scenario": )" + scenario + "}]}",
      "w.json");
  cluster::JobTiming timing(w, 1);
  const cluster::Placement& p = timing.alone_placement(0);
  EXPECT_EQ(p.nodes.front(), 0);
  EXPECT_EQ(p.nodes.back(), 15);
  const cluster::GroupDuty duty = timing.traffic(0, p);
  ASSERT_TRUE(duty.contains(cluster::pod_key(0)));
  ASSERT_TRUE(duty.contains(cluster::pod_key(1)));
  EXPECT_GT(duty.at(cluster::pod_key(0)), 0.0);
  EXPECT_GT(duty.at(0), 0.0);  // and every leaf's uplinks
  const std::size_t before = timing.simulations();
  const cluster::JobPace half =
      timing.shared_pace(0, p, {{cluster::pod_key(0), 0.5}, {cluster::pod_key(1), 0.5}});
  EXPECT_EQ(timing.simulations(), before + 1);
  EXPECT_GE(half.iteration_s, timing.alone(0).iteration_s);
}

}  // namespace
}  // namespace trainsim
