// Measured-run files (scenario/measured_run.h), the scenario of the same run and
// its predicted kernel classes (execution/kernel_classes.h): `trainsim validate`.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <numeric>
#include <sstream>

#include "execution/kernel_classes.h"
#include "execution/simulate.h"
#include "report/metrics.h"
#include "report/validation_report.h"
#include "scenario/errors.h"
#include "scenario/measured_run.h"
#include "scenario/reader.h"

namespace trainsim {
namespace {

using ::testing::HasSubstr;

const std::string kFixture = std::string(TRAINSIM_SOURCE_DIR) + "/tests/data/measured_run_fixture.json";

nlohmann::json fixture() {
  std::ifstream in(kFixture);
  std::stringstream text;
  text << in.rdbuf();
  return nlohmann::json::parse(text.str());
}

// The message of the ScenarioError parsing `doc` throws ("" if none).
std::string error_of(const nlohmann::json& doc) {
  try {
    scenario::parse_measured_run(doc.dump(), "RUN.json");
  } catch (const scenario::ScenarioError& e) {
    return e.what();
  }
  return "";
}

TEST(MeasuredRun, ReadsTheFixture) {
  const scenario::MeasuredRun r = scenario::read_measured_run(kFixture);
  EXPECT_EQ(r.device_name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(r.num_layers, 2);
  EXPECT_EQ(r.hidden_size, 768);
  EXPECT_EQ(r.vocab_size, 50304);
  EXPECT_EQ(r.grad_accumulation_steps, 2);
  EXPECT_DOUBLE_EQ(r.step_median_s, 0.0125);
  EXPECT_EQ(r.steps_timed, 3);
  EXPECT_DOUBLE_EQ(r.kernel_class_s[0], 0.008);  // gemm
  EXPECT_DOUBLE_EQ(*r.peak_memory_bytes, 6e9);
  EXPECT_DOUBLE_EQ(*r.loss_held_out, 9.35);
  // The timeline is resolved against the run file's folder.
  EXPECT_EQ(r.timeline.filename(), "measured_run_fixture.timeline.json");
  EXPECT_EQ(r.timeline.parent_path(), std::filesystem::path(kFixture).parent_path());
}

TEST(MeasuredRun, ErrorsNameTheFieldAndWhatWasExpected) {
  nlohmann::json doc = fixture();
  doc["format"] = "trainsim-timeline";
  EXPECT_THAT(error_of(doc), HasSubstr("RUN.json: /format: expected \"trainsim-measured-run\""));

  doc = fixture();
  doc["model"].erase("hidden_size");
  EXPECT_THAT(error_of(doc), HasSubstr("/model/hidden_size"));

  doc = fixture();
  doc["model"]["num_attention_heads"] = 7;
  EXPECT_THAT(error_of(doc), HasSubstr("/model/num_attention_heads: must divide hidden_size (768)"));

  doc = fixture();
  doc["training"]["data_parallel_size"] = 4;
  EXPECT_THAT(error_of(doc), HasSubstr("/training/data_parallel_size: must equal gpus_per_node x num_nodes (1 x 1)"));

  doc = fixture();
  doc["step_time_s"]["median"] = -1.0;
  EXPECT_THAT(error_of(doc), HasSubstr("/step_time_s/median"));

  doc = fixture();
  doc["training"]["framework"] = "pytorch";
  EXPECT_THAT(error_of(doc), HasSubstr("/training/framework"));
  EXPECT_THAT(error_of(doc), HasSubstr("pytorch_eager"));

  doc = fixture();
  doc["kernel_class_s"]["gemms"] = 0.001;  // a misspelt class
  EXPECT_THAT(error_of(doc), HasSubstr("gemm"));

  EXPECT_THAT(error_of(nlohmann::json::array()), HasSubstr("RUN.json"));
}

TEST(MeasuredRun, DeviceNamesMapToPresets) {
  EXPECT_EQ(scenario::gpu_preset_for_device("NVIDIA H100 80GB HBM3"), "H100-SXM5-80GB");
  EXPECT_EQ(scenario::gpu_preset_for_device("NVIDIA H200"), "H200-SXM-141GB");
  EXPECT_EQ(scenario::gpu_preset_for_device("NVIDIA A100-SXM4-80GB"), "A100-SXM4-80GB");
  // "gb200" holds "b200": the longer name wins.
  EXPECT_EQ(scenario::gpu_preset_for_device("NVIDIA GB200"), "GB200");
  EXPECT_EQ(scenario::gpu_preset_for_device("NVIDIA B300 SXM6 AC"), "B300");
  EXPECT_EQ(scenario::gpu_preset_for_device("AMD Instinct MI300X"), "MI300X");
  EXPECT_EQ(scenario::gpu_preset_for_device("NVIDIA B200"), "B200");
  EXPECT_FALSE(scenario::gpu_preset_for_device("NVIDIA GeForce RTX 4090"));
}

TEST(MeasuredRun, TheScenarioIsTheSameRun) {
  const scenario::MeasuredRun r = scenario::read_measured_run(kFixture);
  const config::Scenario s = scenario::scenario_for_measured_run(r);
  EXPECT_EQ(s.cluster.gpu.name, "H100-SXM5-80GB");
  EXPECT_EQ(s.model.num_layers, 2);
  EXPECT_EQ(s.model.vocab_size, 50304);
  EXPECT_FALSE(s.model.untie_embeddings);
  EXPECT_EQ(s.training.micro_batch_size, 8);
  EXPECT_EQ(s.training.global_batch_size, 16);  // 8 x 2 accumulation steps x 1 GPU
  EXPECT_EQ(s.parallel.data, 1);
  EXPECT_EQ(s.parallel.tensor, 1);
  EXPECT_TRUE(s.parallel.overlap_grad_reduce);
  EXPECT_EQ(s.training.framework, workload::Framework::kFused);  // no "framework", not trainsim-train's tool

  scenario::MeasuredRun unknown = r;
  unknown.device_name = "NVIDIA GeForce RTX 4090";
  try {
    (void)scenario::scenario_for_measured_run(unknown);
    FAIL() << "an unknown device needs --gpu";
  } catch (const scenario::ScenarioError& e) {
    EXPECT_THAT(e.what(), HasSubstr("/device/name"));
    EXPECT_THAT(e.what(), HasSubstr("--gpu"));
  }
  scenario::MeasuredScenarioOptions o;
  o.gpu = "A100-SXM4-80GB";
  EXPECT_EQ(scenario::scenario_for_measured_run(unknown, o).cluster.gpu.name, "A100-SXM4-80GB");
}

// A GPU whose GEMMs run at peak (one efficiency point, 1.0) and whose memory is
// fast enough that every GEMM below is compute-bound.
config::Scenario ideal_gpu_run(int layers, int hidden, int vocab) {
  const nlohmann::json doc = {
      {"cluster",
       {{"gpu",
         {{"name", "ideal"},
          {"peak_flops", {{"bf16", "1000TFLOP/s"}, {"fp32", "100TFLOP/s"}}},
          {"memory_capacity", "80GiB"},
          {"memory_bandwidth", "100TB/s"},
          {"matmul_efficiency", {{1.0, 1.0}}}}},
        {"num_nodes", 1},
        {"gpus_per_node", 1}}},
      {"model",
       {{"num_layers", layers},
        {"hidden_size", hidden},
        {"num_attention_heads", 12},
        {"seq_length", 1024},
        {"vocab_size", vocab},
        {"hidden_dropout", 0.0},
        {"attention_dropout", 0.0}}},
      {"training", {{"global_batch_size", 16}, {"micro_batch_size", 8}, {"precision", "bf16"}}},
      {"parallelism", {{"tp", 1}, {"pp", 1}}}};
  return scenario::parse_scenario_text(doc.dump(), "ideal.json");
}

TEST(KernelClasses, GemmTimeIsThreeTimesTheForwardMatmulFlopsAtPeak) {
  // Forward matmuls per layer 24 t h^2 (QKV 6, projection 2, MLP 16 with f = 4h),
  // output layer 2 t V h; backward twice the forward; t = 8 x 1024 tokens per
  // micro-batch, 2 micro-batches.
  const config::Scenario s = ideal_gpu_run(2, 768, 50304);
  const double t = 8.0 * 1024.0, h = 768.0, v = 50304.0;
  const double forward = 24.0 * t * h * h * 2.0 + 2.0 * t * v * h;
  const double expected = 2.0 * 3.0 * forward / 1e15;
  const exec::KernelClassSeconds c = exec::kernel_class_seconds(s);
  EXPECT_NEAR(c[0], expected, 1e-12);
  EXPECT_EQ(c[8], 0.0);  // all_reduce: from the network model, not here
}

TEST(KernelClasses, ClassesAddUpToTheSimulatedComputeOfOneGpu) {
  // One GPU, no communication: the iteration's compute and optimizer time is the
  // sum of its kernels, each task rounded to 1 ns.
  const config::Scenario s = ideal_gpu_run(3, 768, 50304);
  const exec::KernelClassSeconds c = exec::kernel_class_seconds(s);
  const double sum = std::accumulate(c.begin(), c.end(), 0.0);
  const report::Metrics m = report::compute_metrics(s, exec::simulate(s));
  EXPECT_NEAR(sum, m.breakdown_s.compute + m.breakdown_s.optimizer, 1e-6);
  EXPECT_NEAR(sum, m.iteration_time_s, 1e-6);
  // Every op of a GPT-2 falls in a named class: nothing in "other".
  for (std::size_t i = 0; i + 2 < c.size(); ++i) EXPECT_GT(c[i], 0.0) << config::kKernelClasses[i];
  EXPECT_EQ(c[9], 0.0);
}

TEST(KernelClasses, RefusesLayoutsTheTrainerDoesNotRun) {
  nlohmann::json doc = {{"cluster", {{"gpu", "H100-SXM5-80GB"}, {"num_nodes", 1}}},
                        {"model", "gpt2-124m"},
                        {"training", {{"global_batch_size", 16}, {"micro_batch_size", 1}}},
                        {"parallelism", {{"tp", 2}}}};
  const config::Scenario s = scenario::parse_scenario_text(doc.dump(), "tp.json");
  EXPECT_THROW((void)exec::kernel_class_seconds(s), std::invalid_argument);
}

TEST(ValidationReport, ErrorsArePredictedOverMeasuredMinusOne) {
  const scenario::MeasuredRun r = scenario::read_measured_run(kFixture);
  report::Metrics m;
  m.iteration_time_s = 0.01375;  // 10% above the measured median 12.5 ms
  m.breakdown_s.exposed_communication = 0.0;
  m.memory.timeline_peak_bytes = 5.7e9;  // 5% below 6 GB
  exec::KernelClassSeconds c{};
  c[0] = 0.006;  // gemm: -25%
  const report::ValidationReport v = report::validation_report(r, m, c);
  EXPECT_NEAR(*v.step.error(), 0.10, 1e-12);
  EXPECT_NEAR(*v.kernel_classes[0].error(), -0.25, 1e-12);
  EXPECT_NEAR(*v.peak_memory->error(), -0.05, 1e-12);
  EXPECT_FALSE(v.kernel_classes[8].error());  // all_reduce: nothing measured
  const std::string text = report::validation_text(v);
  EXPECT_THAT(text, HasSubstr("+10.0%"));
  EXPECT_THAT(text, HasSubstr("-25.0%"));
  EXPECT_THAT(text, HasSubstr("held-out 9.3500"));
}

}  // namespace
}  // namespace trainsim
