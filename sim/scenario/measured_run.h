#pragma once
// A measured training run (RUN.json, docs/validation.md "Measured run file"), as
// trainsim-train writes it, and the scenario that simulates the same run for
// `trainsim validate`.
#include <array>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "config/kernel_class_names.h"
#include "config/scenario.h"

namespace trainsim::scenario {

struct MeasuredRun {
  std::string file;  // where it was read from (messages, relative paths)
  std::string tool;
  std::string device_name;
  int device_count = 1;
  // Model (GPT-2 style: learned positions, LayerNorm, GELU MLP, biases).
  long long num_layers = 0;
  long long hidden_size = 0;
  long long num_attention_heads = 0;
  long long ffn_hidden_size = 0;
  long long seq_length = 0;
  long long vocab_size = 0;
  long long max_position_embeddings = 0;
  bool tied_embeddings = true;
  // Training.
  long long micro_batch_size = 1;
  long long grad_accumulation_steps = 1;
  int data_parallel_size = 1;
  int gpus_per_node = 1;
  int num_nodes = 1;
  std::string precision = "bf16";
  double dropout = 0.0;
  // Whose kernels ran the step: "fused" (trainsim-train) or "pytorch_eager"
  // (scripts/pytorch-gpt-step.py); the scenario's training.framework.
  std::string framework = "fused";
  // Measurements.
  long long warmup_steps = 0;
  double step_median_s = 0.0;
  double step_min_s = 0.0;
  double step_max_s = 0.0;
  long long steps_timed = 0;
  std::array<double, config::kKernelClasses.size()> kernel_class_s{};  // by config::kKernelClasses
  std::optional<double> peak_memory_bytes;
  std::string peak_memory_source;
  std::optional<double> loss_initial;
  std::optional<double> loss_final;
  std::optional<double> loss_held_out;
  std::filesystem::path timeline;  // resolved against the run file's folder; empty: none
};

// Parses a measured run; `file` names it in messages (ScenarioError: file, JSON
// path, what was expected, what was found).
MeasuredRun parse_measured_run(std::string_view text, const std::string& file);
MeasuredRun read_measured_run(const std::filesystem::path& path);

// The GPU preset a device name means ("NVIDIA H100 80GB HBM3" -> "H100-SXM5-80GB");
// nothing when no preset matches.
std::optional<std::string> gpu_preset_for_device(std::string_view device_name);

struct MeasuredScenarioOptions {
  std::optional<std::string> gpu;                      // a GPU preset; default: from the device name
  std::optional<std::filesystem::path> calibration;  // a calibration profile
};

// The scenario of the same run: its model, micro-batch, accumulation steps and
// data-parallel GPUs on the matching GPU preset, without tensor or pipeline
// parallelism, recomputation or ZeRO (trainsim-train uses none of them).
config::Scenario scenario_for_measured_run(const MeasuredRun& run, const MeasuredScenarioOptions& options = {});

}  // namespace trainsim::scenario
