// End to end: the real `trainsim` binary on shipped scenarios.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <unistd.h>
#include <csignal>

#include "cli_harness.h"

namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

using trainsim::cli_harness::Result;
using trainsim::cli_harness::run;
using trainsim::cli_harness::slurp;

std::string scenario(const std::string& name) { return std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/" + name; }

class Cli : public ::testing::Test {
 protected:
  void SetUp() override {
    // The process id keeps two checkouts' test runs on one machine apart.
    dir_ = fs::temp_directory_path() /
           ("trainsim_cli_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) + "_" +
            std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(Cli, RunPrintsASummary) {
  const Result r = run("run " + scenario("gpt2-124m-8xh100.json"));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("iteration time"));
  EXPECT_THAT(r.output, HasSubstr("MFU"));
  EXPECT_THAT(r.output, HasSubstr("memory per GPU"));
  EXPECT_THAT(r.output, HasSubstr("time to train"));
}

TEST_F(Cli, ResultHasEveryContractKey) {
  const fs::path out = dir_ / "result.json";
  const Result r = run("run -q " + scenario("gpt2-124m-8xh100.json") + " --out " + out.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto j = nlohmann::json::parse(slurp(out));
  for (const char* key : {"scenario", "num_gpus", "iteration_time_s", "tokens_per_s", "model_flops_per_iteration",
                          "tflops_per_gpu", "mfu", "breakdown_s", "memory", "time_to_train_s", "cost_usd",
                          "energy_kwh", "reliability", "timeline"})
    EXPECT_TRUE(j.contains(key)) << key;
  for (const char* key : {"compute", "exposed_communication", "pipeline_bubble", "optimizer", "other"})
    EXPECT_TRUE(j["breakdown_s"].contains(key)) << key;
  for (const char* key : {"peak_bytes_per_gpu", "capacity_bytes_per_gpu", "fits"})
    EXPECT_TRUE(j["memory"].contains(key)) << key;
  EXPECT_EQ(j["num_gpus"], 8);
  EXPECT_EQ(j["timeline"], "result.timeline.json");
  const auto tl = nlohmann::json::parse(slurp(dir_ / "result.timeline.json"));
  EXPECT_EQ(tl["num_gpus"], 8);
  EXPECT_EQ(tl["node_of_rank"].size(), 8u);
  EXPECT_FALSE(tl["lanes"].empty());
  // MFU as the contract defines it.
  const double mfu = j["model_flops_per_iteration"].get<double>() /
                     (j["iteration_time_s"].get<double>() * 8 * 989e12);
  EXPECT_DOUBLE_EQ(j["mfu"].get<double>(), mfu);
}

TEST_F(Cli, SameScenarioGivesByteIdenticalFiles) {
  for (const char* name : {"a", "b"}) {
    const fs::path d = dir_ / name;
    fs::create_directories(d);
    const Result r = run("run -q " + scenario("llama3-8b-64xh100.json") + " --out " + (d / "r.json").string() +
                         " --trace " + (d / "t.json").string());
    ASSERT_EQ(r.exit_code, 0) << r.output;
  }
  for (const char* file : {"r.json", "r.timeline.json", "t.json"}) {
    SCOPED_TRACE(file);
    const std::string a = slurp(dir_ / "a" / file);
    EXPECT_FALSE(a.empty());
    EXPECT_EQ(a, slurp(dir_ / "b" / file));
  }
}

TEST_F(Cli, TraceHasAProcessPerGpuAndAThreadPerStream) {
  const fs::path trace = dir_ / "t.json";
  const Result r = run("run -q " + scenario("llama3-8b-64xh100.json") + " --trace " + trace.string() +
                       " --trace-ranks 0-1,63");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto j = nlohmann::json::parse(slurp(trace));
  std::set<int> pids;
  std::set<std::string> threads;
  std::set<std::string> processes;
  for (const auto& e : j["traceEvents"]) {
    pids.insert(e["pid"].get<int>());
    if (e["ph"] == "M" && e["name"] == "thread_name") threads.insert(e["args"]["name"].get<std::string>());
    if (e["ph"] == "M" && e["name"] == "process_name") processes.insert(e["args"]["name"].get<std::string>());
    if (e["ph"] == "X") {
      EXPECT_GE(e["dur"].get<double>(), 0.0);
      EXPECT_TRUE(e.contains("cat"));
    }
  }
  // The three GPUs asked for, and the network's link-utilization counters (pid = number of GPUs).
  EXPECT_EQ(pids, (std::set<int>{0, 1, 63, 64}));
  EXPECT_EQ(threads, (std::set<std::string>{"compute", "dp_comm"}));
  EXPECT_TRUE(processes.contains("GPU 63 (node 7)"));
  EXPECT_TRUE(processes.contains("network links"));
}

TEST_F(Cli, DoesNotFitIsReportedWithItsReason) {
  const fs::path out = dir_ / "r.json";
  const Result r = run("run " + scenario("gpt3-175b-1024xa100-dp.json") + " --out " + out.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("DOES NOT FIT"));
  const auto j = nlohmann::json::parse(slurp(out));
  EXPECT_FALSE(j["memory"]["fits"].get<bool>());
  EXPECT_THAT(j["memory"]["reason"].get<std::string>(), HasSubstr("model states alone exceed"));
}

TEST_F(Cli, BadScenarioFailsCleanlyAndWritesNothing) {
  const fs::path bad = dir_ / "bad.json";
  std::ofstream(bad) << R"({"cluster": {"gpu": "H100-SXM5-80G", "num_nodes": 1}, "model": "gpt2-124m",
                           "training": {"global_batch_size": 8}})";
  const fs::path out = dir_ / "r.json";
  const Result r = run("run " + bad.string() + " --out " + out.string());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.output, HasSubstr("bad.json: /cluster/gpu"));
  EXPECT_THAT(r.output, HasSubstr("did you mean \"H100-SXM5-80GB\""));
  EXPECT_FALSE(fs::exists(out));
}

TEST_F(Cli, UnwritableOutputIsAnErrorAndLeavesNoTemporaryFile) {
  const fs::path out = dir_ / "missing-dir" / "r.json";
  const Result r = run("run -q " + scenario("gpt2-124m-1xh100.json") + " --out " + out.string());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.output, HasSubstr("cannot write"));
  EXPECT_TRUE(fs::is_empty(dir_));
}

TEST_F(Cli, BadRankListAndMissingFileAreErrors) {
  Result r = run("run -q " + scenario("gpt2-124m-8xh100.json") + " --trace " + (dir_ / "t.json").string() +
                 " --trace-ranks 0-9");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.output, HasSubstr("outside 0-7"));
  r = run("run " + (dir_ / "nope.json").string());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.output, HasSubstr("nope.json"));
}

TEST_F(Cli, CollectivePrintsAnNcclTestsTable) {
  const Result r = run("collective --cluster " + scenario("gpt2-124m-8xh100.json") +
                       " --op allreduce -b 8 -e 8G -f 2 --algo ring --model analytic");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("H100-SXM5-80GB, 1 node x 8 GPUs"));
  EXPECT_THAT(r.output, HasSubstr("algbw x 2(n-1)/n = algbw x 1.75"));
  EXPECT_THAT(r.output, HasSubstr("# Avg bus bandwidth    : "));
  // 8 B to 8 GiB by factors of 2: 31 rows, the last 8 GiB of floats.
  std::istringstream lines(r.output);
  int rows = 0;
  for (std::string line; std::getline(lines, line);)
    if (!line.empty() && line.front() != '#') ++rows;
  EXPECT_EQ(rows, 31);
  EXPECT_THAT(r.output, ::testing::ContainsRegex("\n +8589934592 +2147483648 +float +sum +-1 [^\n]* ring\n"));
}

TEST_F(Cli, CollectiveReadsAClusterAloneAndNamesItInErrors) {
  const fs::path cluster = dir_ / "cluster.json";
  std::ofstream(cluster) << R"({"gpu": "H100-SXM5-80GB", "num_nodes": 2})";
  Result r = run("collective --cluster " + cluster.string() + " --op all_gather -b 1M -e 4M -g 16");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("16 GPUs (2 nodes x 8)"));
  const fs::path bad = dir_ / "bad.json";
  std::ofstream(bad) << R"({"gpu": "H100-SXM5-80G", "num_nodes": 2})";
  r = run("collective --cluster " + bad.string());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.output, HasSubstr("bad.json: /gpu"));
}

TEST_F(Cli, CollectiveRejectsBadOperationGroupAndAlgorithm) {
  const std::string cmd = "collective --cluster " + scenario("llama3-8b-64xh100.json");
  Result r = run(cmd + " --op all-reduce");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.output, HasSubstr("unknown operation \"all-reduce\""));
  r = run(cmd + " -b 8X");
  EXPECT_EQ(r.exit_code, 2);
  r = run(cmd + " -g 12");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.output, HasSubstr("a multiple of 8 GPUs"));
  r = run(cmd + " --op all_gather --algo tree");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.output, HasSubstr("runs all_reduce only"));
}

TEST_F(Cli, PresetsAreListed) {
  const Result r = run("presets");
  EXPECT_EQ(r.exit_code, 0);
  for (const char* name : {"A100-SXM4-80GB", "H100-SXM5-80GB", "H200-SXM-141GB", "B200", "gpt2-124m", "gpt2-350m",
                           "gpt3-175b", "llama3-8b", "llama3-70b", "llama3-405b", "mixtral-8x7b"})
    EXPECT_THAT(r.output, HasSubstr(name));
}

// A calibration profile of `device` whose bf16 GEMMs all run at `tflops`: a grid
// of 512 and 65536 along m, n and k, which brackets every GEMM of gpt2-124m with
// micro-batch 16 (t = 16384 tokens, h = 768, V = 50257) forward and backward.
std::string gemm_profile(double tflops, const std::string& device = "NVIDIA H100 80GB HBM3") {
  nlohmann::json p = {{"trainsim_calibration", 1}, {"complete", true}, {"date", "2026-11-22T14:03:11Z"},
                      {"device", {{"name", device}}}};
  p["gemm"] = nlohmann::json::array();
  for (double m : {512.0, 65536.0})
    for (double n : {512.0, 65536.0})
      for (double k : {512.0, 65536.0})
        p["gemm"].push_back({{"dtype", "bf16"}, {"m", m}, {"n", n}, {"k", k}, {"seconds", 2 * m * n * k / (tflops * 1e12)}});
  return p.dump();
}

double iteration_time(const fs::path& result) {
  return nlohmann::json::parse(slurp(result))["iteration_time_s"].get<double>();
}

TEST_F(Cli, CalibrationProfileSetsGemmCostsAndIsReported) {
  std::ofstream(dir_ / "slow.json") << gemm_profile(100.0);
  std::ofstream(dir_ / "fast.json") << gemm_profile(900.0);
  const std::string base = "run " + scenario("gpt2-124m-8xh100.json") + " --out ";
  ASSERT_EQ(run(base + (dir_ / "roofline.json").string() + " -q").exit_code, 0);
  const Result slow = run(base + (dir_ / "r-slow.json").string() + " --calibration " + (dir_ / "slow.json").string());
  ASSERT_EQ(slow.exit_code, 0) << slow.output;
  ASSERT_EQ(run(base + (dir_ / "r-fast.json").string() + " -q --calibration " + (dir_ / "fast.json").string())
                .exit_code,
            0);
  // The roofline runs these GEMMs at 40-65% of 989 TFLOP/s (docs/model.md, "Matmul
  // efficiency"): 100 TFLOP/s is slower, 900 faster.
  const double roofline = iteration_time(dir_ / "roofline.json");
  EXPECT_GT(iteration_time(dir_ / "r-slow.json"), roofline);
  EXPECT_LT(iteration_time(dir_ / "r-fast.json"), roofline);

  // Per micro-batch 12 x 4 layer GEMMs + the output layer, forward and backward:
  // 98; 4 micro-batches: 392 from the profile. Everything else, 4 x 248 + 1 - 392
  // (norms, activations, residuals, attention, loss, embedding, optimizer), falls back.
  const auto j = nlohmann::json::parse(slurp(dir_ / "r-slow.json"));
  EXPECT_EQ(j["cost_models"]["compute"], "profile");
  const auto& c = j["calibration"];
  EXPECT_EQ(c["profile"], (dir_ / "slow.json").string());
  EXPECT_EQ(c["device"], "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(c["date"], "2026-11-22T14:03:11Z");
  EXPECT_EQ(c["measured"], 392);
  EXPECT_EQ(c["fallback"], 601);
  EXPECT_FALSE(c["fallback_reasons"].empty());
  EXPECT_THAT(slow.output, HasSubstr("costs             392 kernels from profile slow.json (NVIDIA H100 80GB HBM3, "
                                     "2026-11-22), 601 from the roofline fallback"));
  EXPECT_TRUE(nlohmann::json::parse(slurp(dir_ / "roofline.json"))["calibration"].is_null());
}

// The H200 profile measured our kernels, not PyTorch's: a PyTorch eager step's
// kernels that have a counterpart of ours take its measured rate, counted apart in
// the result and the summary (docs/calibration.md). gpt2-124m (12 layers): attention
// 12 + 12, layer norms 25 forward and 2 x 25 backward (input and gamma-beta
// gradients), GELU 12 + 12, adds 1 + 24 residuals + 24 fork sums + 1 tied sum,
// log_softmax forward (3.29 GB, inside our loss kernel's measured 0.21-4.20 GB; its
// 4.94 GB backward is not, so the fallback prices it), AdamW: 175.
// The committed H200 profile without PyTorch's own rows (sdpa_*, torch_*: added to it
// on 2026-11-30), as it was before them.
TEST_F(Cli, PytorchsKernelsWithoutTheirRowsArePricedByOursAndSaySo) {
  auto doc = nlohmann::json::parse(slurp(std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/calibration/h200-sxm-141gb.json"));
  auto& kernels = doc["kernels"];
  const auto pytorchs = [](const nlohmann::json& row) {
    const std::string name = row["name"].get<std::string>();
    return name.starts_with("sdpa_") || name.starts_with("torch_");
  };
  ASSERT_GT(std::count_if(kernels.begin(), kernels.end(), pytorchs), 0);
  kernels.erase(std::remove_if(kernels.begin(), kernels.end(), pytorchs), kernels.end());
  const std::string profile = (dir_ / "ours-only.json").string();
  std::ofstream(profile) << doc.dump();
  const Result r = run("run " + scenario("validation/gpt2-124m-1xh200.json") + " --calibration " + profile +
                       " --out " + (dir_ / "eager.json").string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto c = nlohmann::json::parse(slurp(dir_ / "eager.json"))["calibration"];
  EXPECT_EQ(c["stand_in"], 175);
  const std::string reasons = c["fallback_reasons"].dump();
  EXPECT_THAT(reasons, HasSubstr("attention: sdpa_forward: not in the profile; priced at our attention_forward "
                                 "kernel's measured rate"));
  EXPECT_THAT(reasons, HasSubstr("input_norm: torch_layernorm_forward: not in the profile; priced at our "
                                 "layernorm_forward kernel's measured bandwidth"));
  EXPECT_THAT(reasons, HasSubstr("qkv_proj.input_cast: torch_cast: not in the profile"));
  EXPECT_THAT(r.output, HasSubstr("175 of PyTorch's kernels (sdpa_*, torch_*) at the measured rate of ours"));
  // The eager memory's parts (docs/model.md, "Memory of a PyTorch eager step"): bf16
  // casts of 12 x 12 h^2 + V h = 123,532,032 weights, 2 B each, 0.23 GiB; two 32 MiB
  // cuBLAS workspaces, 0.06 GiB.
  EXPECT_THAT(r.output, HasSubstr("weights include 0.23 GiB of autocast's bf16 weight casts, activations 0.06 GiB "
                                  "of cuBLAS workspaces"));
}

// A profile's host_dispatch makes a PyTorch eager step wait for its host thread
// (docs/model.md, "Host dispatch"). At 1 ms per forward kernel, 2 ms per backward
// kernel and 5 ms per optimizer step, every kernel is far shorter than its issue
// interval, so the step is the host's time plus the last kernel's (under 1 ms):
// n_f x 1 ms + n_b x 2 ms + 5 ms, with n_f and n_b the forward and backward spans.
TEST_F(Cli, HostDispatchMakesAnEagerStepWaitForTheHost) {
  const std::string root = TRAINSIM_SOURCE_DIR;
  auto profile = nlohmann::json::parse(slurp(root + "/scenarios/calibration/h200-sxm-141gb.json"));
  profile["host_dispatch"] = {{"framework", "torch test"}, {"forward_s", 1e-3}, {"backward_s", 2e-3},
                              {"optimizer_s", 5e-3}};
  std::ofstream(dir_ / "host.json") << profile.dump();
  const Result r = run("run " + scenario("validation/gpt2-124m-1xh200.json") + " --calibration " +
                       (dir_ / "host.json").string() + " --out " + (dir_ / "r.json").string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("kernels issued by torch test's host thread 1000.00 us apart forward, 2000.00 us "
                                  "backward, the optimizer step in 5000.0 us (profile)"));
  const auto result = nlohmann::json::parse(slurp(dir_ / "r.json"));
  EXPECT_EQ(result["calibration"]["host_dispatch"]["forward_s"], 1e-3);
  const auto timeline = nlohmann::json::parse(slurp(dir_ / "r.timeline.json"));
  int forward = 0;
  int backward = 0;
  for (const auto& lane : timeline["lanes"])
    for (const auto& span : lane["spans"]) {
      forward += span["category"] == "forward" ? 1 : 0;
      backward += span["category"] == "backward" ? 1 : 0;
    }
  ASSERT_GT(forward, 100);
  ASSERT_GT(backward, 100);
  const double host = forward * 1e-3 + backward * 2e-3 + 5e-3;
  const double step = result["iteration_time_s"].get<double>();
  EXPECT_GE(step, host);
  EXPECT_LT(step, host + 1e-3);
}

// With enable_cuda_graph the host issues one replay, not kernels: the summary says so and
// names the graph gap, not the host's pace (docs/model.md, "CUDA graphs").
TEST_F(Cli, ACudaGraphStepSaysItHasNoHostDispatch) {
  const std::string root = TRAINSIM_SOURCE_DIR;
  auto doc = nlohmann::json::parse(slurp(scenario("validation/gpt2-124m-1xh200-v50304.json")));
  doc["training"]["enable_cuda_graph"] = true;
  std::ofstream(dir_ / "graph.json") << doc.dump();
  const Result r = run("run " + (dir_ / "graph.json").string() + " --calibration " + root +
                       "/scenarios/calibration/h200-sxm-141gb.json --out " + (dir_ / "g.json").string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("the step replayed from one CUDA graph (enable_cuda_graph): no host dispatch, each "
                                  "kernel 0.84 us longer (profile's graph_kernel_s)"));
  EXPECT_THAT(r.output, Not(HasSubstr("host thread")));
}

TEST_F(Cli, ScenarioCalibrationKeyAndItsOverride) {
  fs::create_directories(dir_ / "calibration");
  std::ofstream(dir_ / "calibration" / "h100.json") << gemm_profile(100.0);
  std::ofstream(dir_ / "h200.json") << gemm_profile(100.0, "NVIDIA H200");
  auto doc = nlohmann::json::parse(slurp(scenario("gpt2-124m-8xh100.json")));
  doc["calibration"] = "calibration/h100.json";  // relative to the scenario's folder
  std::ofstream(dir_ / "s.json") << doc.dump();
  Result r = run("run -q " + (dir_ / "s.json").string() + " --out " + (dir_ / "r.json").string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(nlohmann::json::parse(slurp(dir_ / "r.json"))["calibration"]["measured"], 392);
  // --calibration wins over the key: an H200 profile for H100s is an error naming both.
  r = run("run -q " + (dir_ / "s.json").string() + " --calibration " + (dir_ / "h200.json").string());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.output, HasSubstr("h200.json: the profile was measured on \"NVIDIA H200\", but the cluster's GPU is "
                                  "\"H100-SXM5-80GB\""));
  r = run("run -q " + (dir_ / "s.json").string() + " --calibration " + (dir_ / "missing.json").string());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.output, HasSubstr("missing.json: expected an existing calibration profile file, found no such file"));
}

}  // namespace

// The full-run replay from the command line (docs/reliability.md): the summary,
// the reliability keys, the run timeline, and byte-identical files whatever the
// thread count.
std::string failures_scenario(const fs::path& dir, int threads) {
  auto j = nlohmann::json::parse(slurp(scenario("gpt2-124m-8xh100.json")));
  j["training"]["train_tokens"] = "200B";  // about 14 h of training: several failures in every trial
  j["failures"] = {{"node_mtbf", "2h"}, {"straggler_fraction", 0.1}, {"trials", 12}, {"threads", threads}};
  const fs::path p = dir / ("f" + std::to_string(threads) + ".json");
  std::ofstream(p) << j.dump(2);
  return p.string();
}

TEST_F(Cli, FailuresFillReliabilityAndWriteARunTimeline) {
  const fs::path out = dir_ / "result.json";
  const Result r = run("run " + failures_scenario(dir_, 0) + " --out " + out.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("interruptions"));
  EXPECT_THAT(r.output, HasSubstr("goodput"));
  EXPECT_THAT(r.output, HasSubstr("p10"));
  const auto j = nlohmann::json::parse(slurp(out));
  const auto& rel = j["reliability"];
  EXPECT_GT(rel["expected_interruptions"].get<double>(), 0.0);
  EXPECT_LT(rel["goodput"].get<double>(), 1.0);
  EXPECT_GT(rel["checkpoint_interval_s"].get<double>(), 0.0);
  EXPECT_TRUE(rel["checkpoint_interval_auto"].get<bool>());
  EXPECT_DOUBLE_EQ(j["time_to_train_s"].get<double>(), rel["time_to_train_s"]["mean"].get<double>());
  EXPECT_GT(j["time_to_train_s"].get<double>(), rel["failure_free_time_s"].get<double>());
  EXPECT_EQ(rel["run_timeline"], "result.run_timeline.json");
  const auto tl = nlohmann::json::parse(slurp(dir_ / "result.run_timeline.json"));
  ASSERT_EQ(tl["lanes"].size(), 1u);
  std::set<std::string> categories;
  for (const auto& span : tl["lanes"][0]["spans"]) categories.insert(span["category"].get<std::string>());
  for (const char* c : {"train", "checkpoint", "failure", "restart"}) EXPECT_TRUE(categories.contains(c)) << c;
}

// Ctrl-C during a long Monte Carlo: the trials that ran (0..K-1) make the result,
// marked partial, and the exit status is 128 + SIGINT; before that, once a second
// has passed, stderr said how long the rest would take.
TEST_F(Cli, SigintDuringTheMonteCarloWritesThePartialResult) {
  auto j = nlohmann::json::parse(slurp(scenario("gpt2-124m-64xh100-failures.json")));
  j["training"]["train_tokens"] = "4T";  // a few ms per trial: 20,000 trials take half a minute
  j["failures"]["trials"] = 20000;
  j["failures"]["threads"] = 2;
  const fs::path file = dir_ / "long.json";
  std::ofstream(file) << j.dump(2);
  const fs::path out = dir_ / "result.json";
  const pid_t pid = trainsim::cli_harness::spawn({"run", file.string(), "--out", out.string()}, dir_ / "stdout.txt",
                                                 dir_ / "stderr.txt");
  ASSERT_GT(pid, 0);
  ASSERT_TRUE(trainsim::cli_harness::wait_until(
      [&] { return slurp(dir_ / "stderr.txt").find("left; Ctrl-C stops early") != std::string::npos; }, 300.0))
      << slurp(dir_ / "stderr.txt");
  kill(pid, SIGINT);
  EXPECT_EQ(trainsim::cli_harness::exit_status(pid), 130) << slurp(dir_ / "stderr.txt");
  EXPECT_THAT(slurp(dir_ / "stderr.txt"), HasSubstr("stopped by SIGINT"));
  EXPECT_THAT(slurp(dir_ / "stdout.txt"), HasSubstr("of 20000 trials (PARTIAL: stopped by SIGINT)"));
  const auto rel = nlohmann::json::parse(slurp(out))["reliability"];
  EXPECT_EQ(rel["partial"]["trials_requested"], 20000);
  EXPECT_EQ(rel["partial"]["stopped_by"], "SIGINT");
  EXPECT_GE(rel["trials"].get<int>(), 1);
  EXPECT_LT(rel["trials"].get<int>(), 20000);
}

TEST_F(Cli, GzipTimelineWritesBothTimelinesCompressedAndTheResultNamesThem) {
  const fs::path out = dir_ / "result.json";
  const Result r = run("run " + failures_scenario(dir_, 0) + " --gzip-timeline --out " + out.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto j = nlohmann::json::parse(slurp(out));
  EXPECT_EQ(j["timeline"], "result.timeline.json.gz");
  EXPECT_EQ(j["reliability"]["run_timeline"], "result.run_timeline.json.gz");
  for (const char* name : {"result.timeline.json.gz", "result.run_timeline.json.gz"}) {
    const std::string bytes = slurp(dir_ / name);
    ASSERT_GE(bytes.size(), 18u) << name;  // gzip header and trailer at least (RFC 1952)
    EXPECT_EQ(static_cast<unsigned char>(bytes[0]), 0x1f) << name;
    EXPECT_EQ(static_cast<unsigned char>(bytes[1]), 0x8b) << name;
  }
  EXPECT_FALSE(fs::exists(dir_ / "result.timeline.json"));
  EXPECT_EQ(run("run " + scenario("gpt2-124m-1xh100.json") + " --gzip-timeline").exit_code, 2);  // needs --out
}

TEST_F(Cli, FailuresGiveByteIdenticalResultsOnOneOrEveryThread) {
  for (int threads : {1, 0}) {
    const fs::path d = dir_ / std::to_string(threads);
    fs::create_directories(d);
    const Result r = run("run -q " + failures_scenario(dir_, threads) + " --out " + (d / "r.json").string());
    ASSERT_EQ(r.exit_code, 0) << r.output;
  }
  auto without_name = [](std::string text) {
    // The scenario name is the file's stem (f1 / f0); everything else must match.
    auto j = nlohmann::json::parse(text);
    j.erase("scenario");
    return j.dump();
  };
  EXPECT_EQ(without_name(slurp(dir_ / "1" / "r.json")), without_name(slurp(dir_ / "0" / "r.json")));
  auto runs = [](std::string text) {
    auto j = nlohmann::json::parse(text);
    return j["lanes"].dump();
  };
  EXPECT_EQ(runs(slurp(dir_ / "1" / "r.run_timeline.json")), runs(slurp(dir_ / "0" / "r.run_timeline.json")));
}

// `trainsim validate` on a hand-written run file (tests/data: not a measurement).
std::string measured_fixture() { return std::string(TRAINSIM_SOURCE_DIR) + "/tests/data/measured_run_fixture.json"; }

TEST_F(Cli, ValidateComparesAMeasuredRunAndWritesBothTimelines) {
  const Result r = run("validate --measured " + measured_fixture() + " --out " + (dir_ / "v").string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("step (ms)"));
  EXPECT_THAT(r.output, HasSubstr("12.500"));  // the measured median
  EXPECT_THAT(r.output, HasSubstr("softmax_cross_entropy"));
  const auto j = nlohmann::json::parse(slurp(dir_ / "v" / "validation.json"));
  EXPECT_EQ(j["format"], "trainsim-validation");
  EXPECT_DOUBLE_EQ(j["step_time_s"]["measured"].get<double>(), 0.0125);
  const double predicted = j["step_time_s"]["predicted"].get<double>();
  EXPECT_NEAR(j["step_time_s"]["error"].get<double>(), predicted / 0.0125 - 1.0, 1e-12);
  const auto result = nlohmann::json::parse(slurp(dir_ / "v" / "predicted.json"));
  EXPECT_DOUBLE_EQ(result["iteration_time_s"].get<double>(), predicted);
  EXPECT_EQ(result["timeline"], "predicted.timeline.json");
  EXPECT_TRUE(fs::exists(dir_ / "v" / "predicted.timeline.json"));
  EXPECT_EQ(slurp(dir_ / "v" / "measured.timeline.json"),
            slurp(std::string(TRAINSIM_SOURCE_DIR) + "/tests/data/measured_run_fixture.timeline.json"));
}

// A PyTorch eager run (scripts/pytorch-gpt-step.py --run-out) is validated against
// the PyTorch eager op list: built from the measured gpt2-124m row on the H200
// (tests/validation/pytorch_h200_gpt2.json), the scenario validate makes of it is
// the committed validation scenario, so the two predictions are the same number.
TEST_F(Cli, ValidateTakesAPytorchEagerRun) {
  const std::string root = TRAINSIM_SOURCE_DIR;
  const auto measured = nlohmann::json::parse(slurp(root + "/tests/validation/pytorch_h200_gpt2.json"))["rows"][0];
  ASSERT_EQ(measured["model"], "gpt2-124m");
  nlohmann::json classes;
  for (const auto& [name, seconds] : measured["kernel_class_s"].items())
    classes[name == "other_elementwise" ? "other" : name] = seconds;
  const nlohmann::json doc = {
      {"format", "trainsim-measured-run"},
      {"version", 1},
      {"device", {{"name", "NVIDIA H200"}}},
      {"model", {{"num_layers", 12}, {"hidden_size", 768}, {"num_attention_heads", 12}, {"seq_length", 1024},
                 {"vocab_size", 50257}}},
      {"training", {{"micro_batch_size", 8}, {"framework", "pytorch_eager"}}},
      {"step_time_s", {{"median", measured["step_time_s"]}, {"steps_timed", 30}}},
      {"kernel_class_s", classes},
      {"peak_memory_bytes", measured["peak_memory_bytes"]}};
  std::ofstream(dir_ / "pytorch-run.json") << doc.dump();
  const std::string profile = root + "/scenarios/calibration/h200-sxm-141gb.json";
  const Result v = run("validate --measured " + (dir_ / "pytorch-run.json").string() + " --calibration " + profile +
                       " --out " + (dir_ / "v").string());
  ASSERT_EQ(v.exit_code, 0) << v.output;
  EXPECT_THAT(v.output, HasSubstr("kernels           PyTorch eager's (training.framework \"pytorch_eager\")"));
  EXPECT_THAT(v.output, HasSubstr("41.988"));  // the measured median, ms
  const auto j = nlohmann::json::parse(slurp(dir_ / "v" / "validation.json"));
  EXPECT_EQ(j["framework"], "pytorch_eager");
  const Result r = run("run -q " + scenario("validation/gpt2-124m-1xh200.json") + " --calibration " + profile +
                       " --out " + (dir_ / "r.json").string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_DOUBLE_EQ(j["step_time_s"]["predicted"].get<double>(), iteration_time(dir_ / "r.json"));
}

// PyTorch profiler traces, one per rank, against the job's scenario
// (docs/pytorch-traces.md; tests/data/torch_traces, counted in tests/unit/torch_trace_test.cpp).
TEST_F(Cli, ValidateComparesProfilerTracesWithTheirScenario) {
  const std::string traces = std::string(TRAINSIM_SOURCE_DIR) + "/tests/data/torch_traces/";
  const std::string scenario = std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/gpt2-124m-8xh100.json";
  const Result r = run("validate --measured " + traces + "rank0.json --measured " + traces + "rank1.json --scenario " +
                       scenario + " --out " + (dir_ / "t").string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("1.050"));  // the slowest rank's step, both steps
  EXPECT_THAT(r.output, HasSubstr("rank 1"));
  EXPECT_THAT(r.output, HasSubstr("1 kernels outside every ProfilerStep#N left out"));
  const auto j = nlohmann::json::parse(slurp(dir_ / "t" / "validation.json"));
  EXPECT_DOUBLE_EQ(j["step_time_s"]["measured"].get<double>(), 1050e-6);
  const auto timeline = nlohmann::json::parse(slurp(dir_ / "t" / "measured.timeline.json"));
  EXPECT_EQ(timeline["format"], "trainsim-timeline");
  EXPECT_EQ(timeline["lanes"].size(), 4u);
  // Traces carry no model: the scenario is needed.
  const Result alone = run("validate --measured " + traces + "rank0.json");
  EXPECT_EQ(alone.exit_code, 1) << alone.output;
  EXPECT_THAT(alone.output, HasSubstr("--scenario"));
}

TEST_F(Cli, ValidateNamesTheFileAndFieldOfABadRun) {
  auto doc = nlohmann::json::parse(slurp(measured_fixture()));
  doc["training"]["micro_batch_size"] = -8;
  const fs::path bad = dir_ / "RUN.json";
  std::ofstream(bad) << doc.dump();
  const Result r = run("validate --measured " + bad.string());
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr(bad.string() + ": /training/micro_batch_size"));
  EXPECT_FALSE(fs::exists(dir_ / "validation.json"));
}

// `trainsim validate --corpus` (docs/validation.md, "The public corpus") on two
// cases of the shipped corpus: the table, the groups, corpus.json and the figures.
TEST_F(Cli, ValidateCorpusReportsCasesAndGroups) {
  const std::string corpus = std::string(TRAINSIM_SOURCE_DIR) + "/tests/validation/corpus";
  const Result r = run("validate --corpus " + corpus + " --only gpt3-5b-fp8 -j 2 --out " + (dir_ / "c").string() +
                       " --record " + (dir_ / "figures.json").string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("nemo2407-h100-gpt3-5b-fp8-64"));
  EXPECT_THAT(r.output, HasSubstr("not held out"));
  const auto report = nlohmann::json::parse(slurp(dir_ / "c" / "corpus.json"));
  EXPECT_EQ(report["format"], "trainsim-corpus-report");
  EXPECT_FALSE(report["cases"].empty());
  for (const auto& c : report["cases"]) EXPECT_TRUE(c["error"].is_number()) << c.dump();
  EXPECT_EQ(nlohmann::json::parse(slurp(dir_ / "figures.json"))["format"], "trainsim-corpus-figures");
}

TEST_F(Cli, ValidateNeedsARunOrACorpus) {
  const Result none = run("validate");
  EXPECT_EQ(none.exit_code, 2) << none.output;
  EXPECT_THAT(none.output, HasSubstr("--measured or --corpus is required"));
  const Result both = run("validate --measured a.json --corpus b");
  EXPECT_EQ(both.exit_code, 2) << both.output;
  const Result missing = run("validate --corpus " + (dir_ / "nothing").string());
  EXPECT_EQ(missing.exit_code, 1) << missing.output;
  EXPECT_THAT(missing.output, HasSubstr((dir_ / "nothing").string() + ": expected an existing validation corpus file"));
}
