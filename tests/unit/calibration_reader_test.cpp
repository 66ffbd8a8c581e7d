// Calibration profiles (docs/calibration.md): the documented example reads into
// the plain structs; bad profiles are rejected naming the file, the JSON path,
// what was expected and what was found; scenarios find their profile.
#include <filesystem>
#include <fstream>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "scenario/calibration_reader.h"
#include "scenario/errors.h"
#include "scenario/reader.h"

namespace trainsim::scenario {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

// The example of docs/calibration.md, "The profile format".
constexpr std::string_view kExample = R"({
  "trainsim_calibration": 1,
  "complete": true,
  "date": "2026-11-22T14:03:11Z",
  "command": "trainsim-calibrate --all --out scenarios/calibration/h200-sxm-141gb.json",
  "host": "hostname",
  "device": {"name": "NVIDIA H200", "compute_capability": "9.0", "multiprocessors": 132,
             "memory_bytes": 150754820096, "l2_bytes": 62914560, "count": 1},
  "versions": {"driver": "580.159.04", "cuda_runtime": "13.0", "cublas": "130000", "nccl": "2.27.7"},
  "gemm": [
    {"dtype": "bf16", "m": 4096, "n": 4096, "k": 4096, "seconds": 1.80e-4, "tflops": 763.5}
  ],
  "kernels": [
    {"name": "layernorm_forward", "shape": {"rows": 8192, "cols": 768}, "bytes": 25165824,
     "flops": 0, "seconds": 1.1e-5}
  ],
  "copies": [
    {"kind": "device_to_device", "bytes": 1073741824, "seconds": 5.0e-4, "gbps": 4294.9}
  ],
  "launch_overhead_s": 2.2e-6,
  "collectives": [
    {"op": "all_reduce", "scope": "intra_node", "ranks": 8, "bytes": 1048576, "seconds": 3.1e-5,
     "algbw_gbps": 33.8, "busbw_gbps": 59.2, "wrong": 0}
  ],
  "collective_fits": [
    {"op": "all_reduce", "scope": "intra_node", "ranks": 8, "alpha_s": 1.9e-5, "busbw_gbps": 470.1}
  ]
})";

std::string patched(std::string_view patch) {
  nlohmann::json doc = nlohmann::json::parse(kExample);
  doc.merge_patch(nlohmann::json::parse(patch));
  return doc.dump(2);
}

// kExample with gemm row `index` (0-3 exist) patched.
std::string gemm_patched(std::size_t index, std::string_view row_patch) {
  nlohmann::json doc = nlohmann::json::parse(kExample);
  const nlohmann::json row = doc["gemm"][0];
  for (int i = 0; i < 3; ++i) doc["gemm"].push_back(row);
  doc["gemm"][index].merge_patch(nlohmann::json::parse(row_patch));
  return doc.dump(2);
}

// The message of the ScenarioError reading `text` throws, checked to name the file and `path`.
std::string error_of(const std::string& text, const std::string& path) {
  try {
    static_cast<void>(parse_calibration_text(text, "profile.json"));
  } catch (const ScenarioError& e) {
    EXPECT_EQ(e.file(), "profile.json");
    EXPECT_EQ(e.json_path(), path);
    EXPECT_THAT(e.what(), StartsWith(path.empty() ? "profile.json: " : "profile.json: " + path + ": "));
    return e.what();
  }
  ADD_FAILURE() << "accepted a bad profile:\n" << text;
  return {};
}

TEST(CalibrationReader, ReadsTheDocumentedExample) {
  const ProfileReading r = parse_calibration_text(kExample, "h200.json");
  const hw::CalibrationProfile& p = r.profile;
  EXPECT_TRUE(r.warnings.empty());
  EXPECT_TRUE(p.complete);
  EXPECT_EQ(p.date, "2026-11-22T14:03:11Z");
  EXPECT_EQ(p.device.name, "NVIDIA H200");
  EXPECT_EQ(p.device.multiprocessors, 132);
  EXPECT_EQ(p.device.memory_bytes, 150754820096.0);
  EXPECT_EQ(p.device.context_bytes, 0.0);  // not measured in this example
  EXPECT_EQ(p.version("cublas"), "130000");
  EXPECT_EQ(p.version("nccl"), "2.27.7");
  EXPECT_EQ(p.version("cudnn"), "");
  ASSERT_EQ(p.gemm.size(), 1u);
  EXPECT_EQ(p.gemm[0].dtype, hw::Precision::kBf16);
  EXPECT_EQ(p.gemm[0].m, 4096.0);
  EXPECT_EQ(p.gemm[0].seconds, 1.80e-4);
  ASSERT_EQ(p.kernels.size(), 1u);
  EXPECT_EQ(p.kernels[0].id, hw::KernelId::kLayernormForward);
  EXPECT_EQ(p.kernels[0].shape_value("cols"), 768.0);
  EXPECT_EQ(p.kernels[0].bytes, 25165824.0);
  ASSERT_EQ(p.copies.size(), 1u);
  EXPECT_EQ(p.copies[0].kind, hw::CopyKind::kDeviceToDevice);
  EXPECT_EQ(p.launch_overhead_s, 2.2e-6);
  ASSERT_EQ(p.collectives.size(), 1u);
  EXPECT_EQ(p.collectives[0].op, "all_reduce");
  EXPECT_EQ(p.collectives[0].ranks, 8);
  EXPECT_EQ(p.collectives[0].busbw_gbps, 59.2);
  ASSERT_EQ(p.collective_fits.size(), 1u);
  EXPECT_EQ(p.collective_fits[0].alpha_s, 1.9e-5);
}

TEST(CalibrationReader, AnIncompleteProfileIsReadWithAWarning) {
  const ProfileReading r = parse_calibration_text(patched(R"({"complete": false, "collectives": null})"), "p.json");
  EXPECT_FALSE(r.profile.complete);
  EXPECT_TRUE(r.profile.collectives.empty());
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_THAT(r.warnings[0], StartsWith("p.json: the profile is incomplete"));
}

TEST(CalibrationReader, UnknownKernelsAreKeptButNotPriced) {
  const ProfileReading r = parse_calibration_text(
      patched(R"({"kernels": [{"name": "swiglu_forward", "bytes": 100, "seconds": 1e-6}]})"), "p.json");
  ASSERT_EQ(r.profile.kernels.size(), 1u);
  EXPECT_EQ(r.profile.kernels[0].id, hw::KernelId::kNone);
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_THAT(r.warnings[0], HasSubstr("/kernels/0/name: \"swiglu_forward\" is not a kernel this trainsim knows"));
}

TEST(CalibrationReader, BackwardLayoutRowsAreKeptApart) {
  // Row 1 measured as a data gradient, row 2 as a weight gradient, row 3 forward by name.
  nlohmann::json doc = nlohmann::json::parse(gemm_patched(1, R"({"layout": "data_gradient", "seconds": 2.0e-4})"));
  doc["gemm"][2].merge_patch({{"layout", "weight_gradient"}, {"seconds", 3.0e-4}});
  doc["gemm"][3].merge_patch({{"layout", "forward"}});
  const ProfileReading r = parse_calibration_text(doc.dump(), "p.json");
  ASSERT_EQ(r.profile.gemm.size(), 2u);
  ASSERT_EQ(r.profile.gemm_data_gradient.size(), 1u);
  EXPECT_EQ(r.profile.gemm_data_gradient[0].seconds, 2.0e-4);
  ASSERT_EQ(r.profile.gemm_weight_gradient.size(), 1u);
  EXPECT_EQ(r.profile.gemm_weight_gradient[0].seconds, 3.0e-4);
  EXPECT_THAT(error_of(gemm_patched(0, R"({"layout": "nt"})"), "/gemm/0/layout"), HasSubstr("found \"nt\""));
  EXPECT_THAT(error_of(gemm_patched(0, R"({"dtype": "fp8", "layout": "data_gradient"})"), "/gemm/0/layout"),
              HasSubstr(R"(expected "forward" (fp8 GEMMs run in the forward layout only), found "data_gradient")"));
}

TEST(CalibrationReader, KeysOfANewerHarnessAreIgnoredButTyposAreNot) {
  nlohmann::json doc = nlohmann::json::parse(gemm_patched(1, R"({"repeats": 40, "stddev_s": 1e-6})"));
  doc["versions"] = {{"driver_cuda", "13.0"}, {"cublaslt", 130000}};
  const ProfileReading r = parse_calibration_text(doc.dump(), "p.json");
  EXPECT_EQ(r.profile.gemm.size(), 4u);
  EXPECT_EQ(r.profile.version("driver_cuda"), "13.0");
  EXPECT_EQ(r.profile.version("cublaslt"), "130000");
  EXPECT_THAT(error_of(gemm_patched(1, R"({"secnds": 1e-6})"), "/gemm/1/secnds"),
              HasSubstr(R"(expected a known key (did you mean "seconds"?), found unknown key "secnds")"));
}

TEST(CalibrationReader, Fp8FastAccumulationRowsAreKeptApart) {
  // Row 1: an fp8 GEMM with fast accumulation, row 2 the same shape promoted; rows 0
  // and 3 stay bf16. Each table gets its own, and a spread ("distribution_s") is read past.
  nlohmann::json doc = nlohmann::json::parse(gemm_patched(1, R"({"dtype": "fp8", "accumulation": "fast",
      "seconds": 1.0e-4, "distribution_s": {"min": 9.9e-5, "p90": 1.02e-4}})"));
  doc["gemm"][2].merge_patch({{"dtype", "fp8"}, {"seconds", 1.2e-4}, {"accumulation", "default"}});
  const ProfileReading r = parse_calibration_text(doc.dump(), "p.json");
  ASSERT_EQ(r.profile.gemm.size(), 3u);
  EXPECT_EQ(r.profile.gemm[1].dtype, hw::Precision::kFp8);
  EXPECT_EQ(r.profile.gemm[1].seconds, 1.2e-4);
  ASSERT_EQ(r.profile.gemm_fp8_fast.size(), 1u);
  EXPECT_EQ(r.profile.gemm_fp8_fast[0].seconds, 1.0e-4);
  EXPECT_EQ(r.profile.gemm_fp8_fast[0].m, 4096.0);
  EXPECT_THAT(error_of(gemm_patched(0, R"({"accumulation": "fast"})"), "/gemm/0/accumulation"),
              HasSubstr(R"(expected "default" (only fp8 rows have fast accumulation), found "fast")"));
  EXPECT_THAT(error_of(gemm_patched(0, R"({"accumulation": "quick"})"), "/gemm/0/accumulation"),
              HasSubstr("found \"quick\""));
}

TEST(CalibrationReader, Fp8CastKernelsAreKnown) {
  const ProfileReading r = parse_calibration_text(
      patched(R"({"kernels": [{"name": "fp8_cast", "shape": {"n": 1048576}, "bytes": 3145728, "seconds": 2e-6},
                              {"name": "fp8_cast_transpose", "shape": {"rows": 1024, "cols": 1024},
                               "bytes": 4194304, "seconds": 3e-6}]})"),
      "p.json");
  EXPECT_TRUE(r.warnings.empty());
  ASSERT_EQ(r.profile.kernels.size(), 2u);
  EXPECT_EQ(r.profile.kernels[0].id, hw::KernelId::kFp8Cast);
  EXPECT_EQ(r.profile.kernels[1].id, hw::KernelId::kFp8CastTranspose);
}

TEST(CalibrationReaderErrors, MalformedJson) {
  EXPECT_THAT(error_of(R"({"trainsim_calibration": 1,})", ""), HasSubstr("expected valid JSON"));
  EXPECT_THAT(error_of("", ""), HasSubstr("expected a JSON object (the calibration profile)"));
}

TEST(CalibrationReaderErrors, NotAProfileOrAnotherVersion) {
  EXPECT_THAT(error_of(R"({"cluster": {}})", ""),
              HasSubstr("expected a calibration profile (a JSON object with \"trainsim_calibration\": 1)"));
  EXPECT_THAT(error_of(patched(R"({"trainsim_calibration": 2})"), "/trainsim_calibration"),
              HasSubstr("expected 1 (the profile format this trainsim reads), found 2"));
  EXPECT_THAT(error_of(patched(R"({"gemms": []})"), "/gemms"), HasSubstr("did you mean \"gemm\"?"));
}

TEST(CalibrationReaderErrors, NegativeSeconds) {
  EXPECT_EQ(error_of(gemm_patched(3, R"({"seconds": -1})"), "/gemm/3/seconds"),
            "profile.json: /gemm/3/seconds: expected a positive number, found -1");
  EXPECT_THAT(error_of(gemm_patched(1, R"({"seconds": 0})"), "/gemm/1/seconds"), HasSubstr("found 0"));
  EXPECT_THAT(error_of(patched(R"({"kernels": [{"name": "adamw", "bytes": 1e6, "seconds": -2e-6}]})"),
                       "/kernels/0/seconds"),
              HasSubstr("expected a positive number, found -2e-06"));
}

TEST(CalibrationReaderErrors, UnknownDtype) {
  EXPECT_THAT(error_of(gemm_patched(2, R"({"dtype": "bf17"})"), "/gemm/2/dtype"),
              HasSubstr(R"(did you mean "bf16"?), found "bf17")"));
}

TEST(CalibrationReaderErrors, MissingGemmFields) {
  EXPECT_THAT(error_of(gemm_patched(0, R"({"k": null})"), "/gemm/0/k"),
              HasSubstr("found nothing (the key is required)"));
  EXPECT_THAT(error_of(gemm_patched(0, R"({"seconds": null})"), "/gemm/0/seconds"),
              HasSubstr("expected a positive number, found nothing"));
  EXPECT_THAT(error_of(gemm_patched(0, R"({"m": 0})"), "/gemm/0/m"), HasSubstr("expected an integer from 1"));
  EXPECT_THAT(error_of(patched(R"({"gemm": {"dtype": "bf16"}})"), "/gemm"), HasSubstr("expected an array of objects"));
  EXPECT_THAT(error_of(patched(R"({"device": {"name": null}})"), "/device/name"),
              HasSubstr("expected a string, found nothing"));
  EXPECT_THAT(error_of(patched(R"({"date": null})"), "/date"), HasSubstr("found nothing"));
}

TEST(CalibrationReaderErrors, AttentionRowsNeedAHeadDimAndFlops) {
  EXPECT_THAT(error_of(patched(R"({"kernels": [{"name": "attention_forward", "shape": {"seq": 1024},
                                    "bytes": 1e6, "flops": 1e9, "seconds": 1e-5}]})"),
                       "/kernels/0/shape/head_dim"),
              HasSubstr("expected the head dimension (a positive integer) of an attention kernel"));
  EXPECT_THAT(error_of(patched(R"({"kernels": [{"name": "attention_backward", "shape": {"head_dim": 64},
                                    "bytes": 1e6, "flops": 0, "seconds": 1e-5}]})"),
                       "/kernels/0/flops"),
              HasSubstr("priced by FLOP/s"));
  // PyTorch's attention (scripts/pytorch-kernel-reference.py) obeys the same rule.
  EXPECT_THAT(error_of(patched(R"({"kernels": [{"name": "sdpa_forward", "shape": {"seq": 1024},
                                    "bytes": 1e6, "flops": 1e9, "seconds": 1e-5}]})"),
                       "/kernels/0/shape/head_dim"),
              HasSubstr("of an attention kernel"));
}

TEST(CalibrationReader, HostDispatchOfAFrameworkIsReadAndChecked) {
  const ProfileReading r = parse_calibration_text(
      patched(R"({"host_dispatch": {"framework": "torch 2.11.0+cu130", "forward_s": 9e-6, "backward_s": 5e-6,
                                    "optimizer_s": 1.4e-4, "kernels": {"forward": 100}, "model": "tiny"}})"),
      "p.json");
  ASSERT_TRUE(r.profile.host_dispatch.has_value());
  EXPECT_EQ(r.profile.host_dispatch->framework, "torch 2.11.0+cu130");
  EXPECT_EQ(r.profile.host_dispatch->forward_s, 9e-6);
  EXPECT_EQ(r.profile.host_dispatch->backward_s, 5e-6);
  EXPECT_EQ(r.profile.host_dispatch->optimizer_s, 1.4e-4);
  EXPECT_FALSE(parse_calibration_text(patched("{}"), "p.json").profile.host_dispatch.has_value());
  EXPECT_THAT(error_of(patched(R"({"host_dispatch": {"forward_s": 0, "backward_s": 5e-6}})"),
                       "/host_dispatch/forward_s"),
              HasSubstr("a positive number"));
  EXPECT_THAT(error_of(patched(R"({"host_dispatch": {"forward_s": 9e-6}})"), "/host_dispatch/backward_s"),
              HasSubstr("a positive number"));
}

TEST(CalibrationReaderErrors, BadCollectiveRows) {
  EXPECT_THAT(error_of(patched(R"({"collectives": [{"op": "allreduce", "scope": "intra_node", "ranks": 8,
                                    "bytes": 8, "seconds": 1e-5}]})"),
                       "/collectives/0/op"),
              HasSubstr("did you mean \"all_reduce\"?"));
  EXPECT_THAT(error_of(patched(R"({"collective_fits": [{"op": "all_gather", "scope": "rack", "ranks": 8,
                                    "alpha_s": 1e-5, "busbw_gbps": 100}]})"),
                       "/collective_fits/0/scope"),
              HasSubstr(R"(expected one of "intra_node", "inter_node")"));
}

// kExample with one collectives row of 16 ranks across nodes, `fields` added to it.
std::string inter_node_row(std::string_view fields) {
  return patched(R"({"collectives": [{"op": "all_reduce", "scope": "inter_node", "ranks": 16, "bytes": 1048576,
                     "seconds": 1e-4)" +
                 std::string(fields) + "}]}");
}

TEST(CalibrationReader, NodesSayHowTheRanksWereSpread) {
  // 16 ranks on 2 nodes: 8 on each.
  const ProfileReading r = parse_calibration_text(inter_node_row(R"(, "nodes": 2)"), "p.json");
  ASSERT_EQ(r.profile.collectives.size(), 1u);
  EXPECT_EQ(r.profile.collectives[0].scope, hw::CollectiveScope::kInterNode);
  EXPECT_EQ(r.profile.collectives[0].ranks, 16);
  EXPECT_EQ(r.profile.collectives[0].nodes, 2);
  EXPECT_TRUE(r.warnings.empty());
  // An intra_node row without "nodes" ran on one node (profiles before the field).
  const ProfileReading example = parse_calibration_text(kExample, "p.json");
  EXPECT_EQ(example.profile.collectives[0].nodes, 1);
  EXPECT_EQ(example.profile.collective_fits[0].nodes, 1);
  // A fit carries the spread of its series.
  const ProfileReading fit = parse_calibration_text(
      patched(R"({"collective_fits": [{"op": "all_reduce", "scope": "inter_node", "ranks": 16, "nodes": 4,
                    "alpha_s": 3e-5, "busbw_gbps": 45}]})"),
      "p.json");
  EXPECT_EQ(fit.profile.collective_fits[0].nodes, 4);
}

TEST(CalibrationReader, InterNodeRowsWithoutNodesAreReadWithAWarning) {
  // Older profiles: read, kept (nodes 0: not recorded), said to price nothing.
  const ProfileReading r = parse_calibration_text(inter_node_row(""), "p.json");
  ASSERT_EQ(r.profile.collectives.size(), 1u);
  EXPECT_EQ(r.profile.collectives[0].nodes, 0);
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_EQ(r.warnings[0],
            "p.json: 1 inter_node \"collectives\" rows have no \"nodes\" (how many nodes the ranks ran on); they "
            "price no collective, the network model does");
}

TEST(CalibrationReaderErrors, BadNodes) {
  EXPECT_THAT(error_of(inter_node_row(R"(, "nodes": 0)"), "/collectives/0/nodes"),
              HasSubstr("expected an integer from 1"));
  EXPECT_THAT(error_of(inter_node_row(R"(, "nodes": 32)"), "/collectives/0/nodes"),
              HasSubstr("expected at most \"ranks\" (16) nodes: every node runs at least one rank, found 32"));
  EXPECT_THAT(error_of(inter_node_row(R"(, "nodes": 3)"), "/collectives/0/nodes"),
              HasSubstr("expected a divisor of \"ranks\" (16): the same number of ranks on every node, found 3"));
  EXPECT_THAT(error_of(inter_node_row(R"(, "nodes": 1)"), "/collectives/0/nodes"),
              HasSubstr("expected at least 2 (an inter_node row ran on several nodes), found 1"));
  EXPECT_THAT(error_of(inter_node_row(R"(, "nodes": 2.5)"), "/collectives/0/nodes"), HasSubstr("found 2.5"));
  EXPECT_THAT(error_of(patched(R"({"collectives": [{"op": "all_reduce", "scope": "intra_node", "ranks": 8,
                                    "nodes": 2, "bytes": 8, "seconds": 1e-5}]})"),
                       "/collectives/0/nodes"),
              HasSubstr("expected 1 (an intra_node row ran on one node), found 2"));
  EXPECT_THAT(error_of(patched(R"({"collective_fits": [{"op": "all_gather", "scope": "inter_node", "ranks": 8,
                                    "nodes": 3, "alpha_s": 1e-5, "busbw_gbps": 100}]})"),
                       "/collective_fits/0/nodes"),
              HasSubstr("expected a divisor of \"ranks\" (8)"));
}

// --- Files and scenarios.

class CalibrationFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::path(::testing::TempDir()) /
           ("trainsim_calibration_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_ / "calibration");
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::filesystem::path write(const std::string& name, const std::string& text) const {
    const std::filesystem::path p = dir_ / name;
    std::ofstream(p) << text;
    return p;
  }
  // An 8-GPU gpt2-124m scenario on `gpu`, with `calibration` as its key (JSON value).
  std::filesystem::path scenario(const std::string& calibration, const std::string& gpu = "H100-SXM5-80GB") const {
    return write("scenario.json", R"({"cluster": {"gpu": ")" + gpu + R"(", "num_nodes": 1}, "model": "gpt2-124m",
        "training": {"global_batch_size": 8, "micro_batch_size": 1}, "calibration": )" + calibration + "}");
  }

  std::filesystem::path dir_;
};

TEST_F(CalibrationFiles, AScenarioKeyIsRelativeToTheScenariosFolder) {
  write("calibration/h100.json", patched(R"({"device": {"name": "NVIDIA H100 80GB HBM3"}})"));
  const config::Scenario s = read_scenario_file(scenario(R"("calibration/h100.json")"));
  ASSERT_TRUE(s.calibration.has_value());
  EXPECT_EQ(s.calibration->file, (dir_ / "calibration/h100.json").string());
  EXPECT_EQ(s.calibration->profile->device.name, "NVIDIA H100 80GB HBM3");
  EXPECT_FALSE(read_scenario_file(scenario("null")).calibration.has_value());
}

TEST_F(CalibrationFiles, AProfileOfAnotherGpuIsRejectedNamingBoth) {
  write("calibration/h200.json", kExample.data());
  const std::filesystem::path path = scenario(R"("calibration/h200.json")");
  try {
    static_cast<void>(read_scenario_file(path));
    FAIL() << "an H200 profile priced an H100 cluster";
  } catch (const ScenarioError& e) {
    EXPECT_EQ(e.file(), path.string());
    EXPECT_EQ(e.json_path(), "/calibration");
    EXPECT_THAT(e.what(), HasSubstr(R"(was measured on "NVIDIA H200", but the cluster's GPU is "H100-SXM5-80GB")"));
  }
  EXPECT_TRUE(read_scenario_file(scenario(R"("calibration/h200.json")", "H200-SXM-141GB")).calibration.has_value());
}

TEST_F(CalibrationFiles, AProfileOfCollectivesOnlyFitsAnyGpu) {
  // nccl-tests output imported from elsewhere: no kernels to price, no device to match.
  write("calibration/nccl.json", patched(R"({"device": {"name": "imported from nccl-tests"}, "gemm": null,
                                              "kernels": null})"));
  EXPECT_TRUE(read_scenario_file(scenario(R"("calibration/nccl.json")")).calibration.has_value());
}

TEST_F(CalibrationFiles, AnOverrideReplacesTheKeyWithoutReadingIt) {
  const std::filesystem::path profile = write("h100.json", patched(R"({"device": {"name": "NVIDIA H100"}})"));
  ReadOptions options;
  options.calibration = profile;
  const config::Scenario s = read_scenario_file(scenario(R"("calibration/missing.json")"), options);
  ASSERT_TRUE(s.calibration.has_value());
  EXPECT_EQ(s.calibration->file, profile.string());
}

TEST_F(CalibrationFiles, AMissingProfileFile) {
  try {
    static_cast<void>(read_calibration_file(dir_ / "nope.json"));
    FAIL();
  } catch (const ScenarioError& e) {
    EXPECT_THAT(e.what(), HasSubstr("expected an existing calibration profile file, found no such file"));
  }
}

}  // namespace
}  // namespace trainsim::scenario
