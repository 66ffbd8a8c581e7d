// PyTorch profiler traces as measured runs (docs/pytorch-traces.md): two synthetic
// ranks (tests/data/torch_traces), each step a forward GEMM (300 us), a flash-attention
// backward kernel (100 us, launched from autograd's thread), an NCCL all-reduce on its own
// stream (200 us, 50 us of it beside the attention) and the fused Adam (50 us), the
// figures counted by hand.
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "config/kernel_class_names.h"
#include "report/trace_timeline.h"
#include "scenario/errors.h"
#include "scenario/torch_trace.h"

namespace trainsim {
namespace {

const std::string kDir = std::string(TRAINSIM_SOURCE_DIR) + "/tests/data/torch_traces/";

std::size_t class_index(std::string_view name) {
  for (std::size_t i = 0; i < config::kKernelClasses.size(); ++i)
    if (config::kKernelClasses[i] == name) return i;
  throw std::runtime_error("no class");
}

TEST(TorchTrace, KernelNamesFallInThePytorchStepScriptsClasses) {
  EXPECT_EQ(config::kKernelClasses[config::kernel_class_of_name("sm90_xmma_gemm_bf16bf16_bf16f32")], "gemm");
  EXPECT_EQ(config::kKernelClasses[config::kernel_class_of_name("nvjet_hsh_128x256_64x4_2x1_v_bz_coopA_NNT")], "gemm");
  EXPECT_EQ(config::kKernelClasses[config::kernel_class_of_name("void flash_fwd_kernel<...>")], "attention");
  EXPECT_EQ(config::kKernelClasses[config::kernel_class_of_name("ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL")],
            "all_reduce");
  EXPECT_EQ(config::kKernelClasses[config::kernel_class_of_name("void at::native::vectorized_layer_norm_kernel")],
            "layernorm");
  EXPECT_EQ(config::kKernelClasses[config::kernel_class_of_name("triton_red_fused__to_copy_mean_mul_rms_norm_0")],
            "layernorm");
  EXPECT_EQ(config::kKernelClasses[config::kernel_class_of_name("void at::native::(anonymous)::GeluCUDAKernelImpl")],
            "gelu");
  EXPECT_EQ(config::kKernelClasses[config::kernel_class_of_name("Memset (Device)")], "other");
}

TEST(TorchTrace, EachStepHasItsKernelsItsPeriodAndItsExposedCommunication) {
  const scenario::TorchTrace t = scenario::read_torch_trace(kDir + "rank0.json", 5);
  EXPECT_EQ(t.rank, 0);  // distributedInfo's, not the fallback
  EXPECT_EQ(t.device_name, "NVIDIA H100 80GB HBM3");
  ASSERT_EQ(t.steps.size(), 3U);
  EXPECT_EQ(t.kernels_outside_steps, 1U);  // the memset launched after ProfilerStep#4
  const scenario::TraceStep& s = t.steps[0];
  EXPECT_EQ(s.number, 2);
  ASSERT_EQ(s.kernels.size(), 4U);
  // Step 2's first kernel at 100 us, step 3's at 1100 us; step 3 to step 4's at 2150 us.
  EXPECT_TRUE(s.timed);
  EXPECT_NEAR(s.time_s, 1000e-6, 1e-12);
  EXPECT_NEAR(t.steps[1].time_s, 1050e-6, 1e-12);
  // The last step has no next: its kernels' span, 100 + 600 us, not timed.
  EXPECT_FALSE(t.steps[2].timed);
  EXPECT_NEAR(t.steps[2].time_s, 600e-6, 1e-12);
  EXPECT_NEAR(s.class_s[class_index("gemm")], 300e-6, 1e-12);
  EXPECT_NEAR(s.class_s[class_index("attention")], 100e-6, 1e-12);
  EXPECT_NEAR(s.class_s[class_index("optimizer")], 50e-6, 1e-12);
  EXPECT_NEAR(s.communication_s, 200e-6, 1e-12);
  // NCCL runs 450-650 us; compute covers 100-500 and 650-700: 150 us exposed.
  EXPECT_NEAR(s.exposed_communication_s, 150e-6, 1e-12);
  // Kernels cover 100-700 us of the step's 100-1100: the GPU idles 400 us; step 3
  // (1100-2150) 450 us.
  EXPECT_NEAR(s.gpu_idle_s, 400e-6, 1e-12);
  EXPECT_NEAR(t.steps[1].gpu_idle_s, 450e-6, 1e-12);
  // Inside ProfilerStep#2 (0-1000 us) the host ran aten::mm (5-9 us) and four launches
  // of 5 us: 24 us.
  EXPECT_NEAR(s.host_ops_s, 24e-6, 1e-12);
}

TEST(TorchTrace, TheJobsStepIsTheSlowestRanksMedianAndClassesAreMeans) {
  const std::vector<scenario::TorchTrace> traces = {scenario::read_torch_trace(kDir + "rank0.json"),
                                                    scenario::read_torch_trace(kDir + "rank1.json")};
  const scenario::MeasuredRun r = scenario::measured_run_from_traces(traces, 8, "fused");
  // Step 2: ranks 1000 and 1050 us; step 3: 1050 and 1000 us. The slowest, 1050 both.
  EXPECT_EQ(r.steps_timed, 2);
  EXPECT_NEAR(r.step_median_s, 1050e-6, 1e-12);
  EXPECT_NEAR(r.step_min_s, 1050e-6, 1e-12);
  EXPECT_NEAR(r.kernel_class_s[class_index("gemm")], 300e-6, 1e-12);
  EXPECT_NEAR(r.kernel_class_s[class_index("all_reduce")], 150e-6, 1e-12);  // exposed, as predicted
  EXPECT_EQ(r.device_count, 8);  // the scenario's GPUs
  EXPECT_EQ(r.framework, "fused");
  EXPECT_EQ(r.tool, "torch.profiler");
}

TEST(TorchTrace, TheTimelineHoldsTheLastCommonStepPerRankAndStream) {
  const std::vector<scenario::TorchTrace> traces = {scenario::read_torch_trace(kDir + "rank0.json"),
                                                    scenario::read_torch_trace(kDir + "rank1.json")};
  const long long step = report::last_common_timed_step(traces);
  EXPECT_EQ(step, 3);
  std::ostringstream os;
  report::write_trace_timeline(os, traces, step, "synthetic");
  const nlohmann::json j = nlohmann::json::parse(os.str());
  ASSERT_EQ(j["lanes"].size(), 4U);  // 2 ranks x streams 7 and 20
  const nlohmann::json& nccl = j["lanes"][1]["spans"][0];
  EXPECT_EQ(j["lanes"][1]["stream"], "stream 20");
  EXPECT_EQ(nccl["category"], "all_reduce");
  EXPECT_NEAR(nccl["start"].get<double>(), 350e-6, 1e-12);  // from the step's first kernel
  EXPECT_NEAR(nccl["end"].get<double>(), 550e-6, 1e-12);
  // The GEMM and Adam were launched from the loop's thread (the step's), the attention
  // backward from autograd's.
  const nlohmann::json& compute = j["lanes"][0]["spans"];
  ASSERT_EQ(compute.size(), 3U);
  EXPECT_EQ(compute[0]["category"], "forward");
  EXPECT_EQ(compute[1]["category"], "backward");
  EXPECT_EQ(compute[2]["category"], "optimizer");
}

// A trace recorded on a lent H200 (2026-11-30): scripts/pytorch-gpt-step.py's GPT-2
// 124M step, 8 x 1024 tokens, four steps under torch.profiler, as PyTorch exported it,
// gzip'd (tests/validation/h200/pytorch-gpt2-124m.trace.json.gz, 10 MB inflated). The
// figures were counted apart from this reader, by a few lines of Python over the same
// events: a kernel (or memset) belongs to the ProfilerStep#N whose host range holds its
// launch (the cuda_runtime or cuda_driver event of the same correlation id); 839 per
// step (719 kernels, 120 memsets), 261 launched outside every step; the steps' first
// kernels at 29.431057, 28.768685 and 26.641476 ms intervals; the GEMM kernels (nvjet)
// 8.472332, 8.468520 and 8.457708 ms of the three timed steps.
TEST(TorchTrace, ARecordedH200StepIsReadFromItsGzippedTrace) {
  const std::string path = std::string(TRAINSIM_SOURCE_DIR) + "/tests/validation/h200/pytorch-gpt2-124m.trace.json.gz";
  EXPECT_TRUE(scenario::is_torch_trace_file(path));
  const scenario::TorchTrace t = scenario::read_torch_trace(path);
  EXPECT_EQ(t.device_name, "NVIDIA H200");
  EXPECT_EQ(t.kernels_outside_steps, 261U);
  ASSERT_EQ(t.steps.size(), 4U);
  const double period_ms[3] = {29.431056640625, 28.7686845703125, 26.6414755859375};
  const double gemm_ms[3] = {8.472332, 8.468520, 8.457708};
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(t.steps[i].number, static_cast<long long>(i) + 1);
    EXPECT_EQ(t.steps[i].kernels.size(), 839U);
    EXPECT_EQ(t.steps[i].timed, i < 3);
    if (i == 3) continue;
    EXPECT_NEAR(t.steps[i].time_s, period_ms[i] * 1e-3, 1e-9);
    EXPECT_NEAR(t.steps[i].class_s[class_index("gemm")], gemm_ms[i] * 1e-3, 1e-9);
    EXPECT_EQ(t.steps[i].communication_s, 0.0);
  }
}

void expect_error(const std::string& text, const std::string& pointer, const std::string& words) {
  try {
    (void)scenario::parse_torch_trace(text, "t.json");
    FAIL() << "accepted " << text;
  } catch (const scenario::ScenarioError& e) {
    EXPECT_EQ(e.json_path(), pointer) << e.what();
    EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
  }
}

TEST(TorchTrace, BadTracesNameTheEventAndWhatWasExpected) {
  expect_error(R"({"traceEvents": 3})", "/traceEvents", "an array of trace events");
  expect_error(R"({"traceEvents": []})", "/traceEvents", "ProfilerStep#N");
  expect_error(R"({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": "soon", "dur": 1}]})",
               "/traceEvents/0/ts", "a time in microseconds");
  expect_error(R"({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": -2}]})",
               "/traceEvents/0/dur", ">= 0");
  expect_error(R"({"traceEvents": [7]})", "/traceEvents/0", "a trace event");
  // One step only, with kernels: its span is its time; none: the job has no timed step.
  const std::string one = R"({"traceEvents": [
      {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#0", "ts": 0, "dur": 100}]})";
  const scenario::TorchTrace empty = scenario::parse_torch_trace(one, "t.json");
  EXPECT_TRUE(empty.steps.empty());
  EXPECT_THROW((void)scenario::measured_run_from_traces({empty}, 1, "fused"), scenario::ScenarioError);
}

}  // namespace
}  // namespace trainsim
