// Reads measured runs (docs/validation.md, "Measured run file").
#include "scenario/measured_run.h"

#include <algorithm>
#include <cctype>
#include <limits>
#include <utility>

#include <nlohmann/json.hpp>

#include "scenario/errors.h"
#include "scenario/json_document.h"
#include "scenario/json_fields.h"
#include "scenario/reader.h"

namespace trainsim::scenario {

namespace {

constexpr long long kMaxDim = 1LL << 24;  // far above any model trainsim-train runs
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr int kFormatVersion = 1;

void read_model(const ObjectReader& root, MeasuredRun& r) {
  const ObjectReader m = root.object("model", {"num_layers", "hidden_size", "num_attention_heads", "ffn_hidden_size",
                                               "seq_length", "vocab_size", "max_position_embeddings",
                                               "tied_embeddings"});
  r.num_layers = m.integer("num_layers", 1, kMaxDim);
  r.hidden_size = m.integer("hidden_size", 1, kMaxDim);
  r.num_attention_heads = m.integer("num_attention_heads", 1, kMaxDim);
  if (r.hidden_size % r.num_attention_heads != 0)
    m.fail_message("num_attention_heads",
                   "must divide hidden_size (" + std::to_string(r.hidden_size) + "): every head has hidden/heads channels");
  r.ffn_hidden_size = m.integer("ffn_hidden_size", 1, kMaxDim, 4 * r.hidden_size);
  r.seq_length = m.integer("seq_length", 1, kMaxDim);
  r.vocab_size = m.integer("vocab_size", 1, kMaxDim);
  r.max_position_embeddings = m.integer("max_position_embeddings", r.seq_length, kMaxDim, r.seq_length);
  r.tied_embeddings = m.boolean("tied_embeddings", true);
}

void read_training(const ObjectReader& root, MeasuredRun& r) {
  const ObjectReader t = root.object("training", {"micro_batch_size", "grad_accumulation_steps", "data_parallel_size",
                                                  "gpus_per_node", "num_nodes", "precision", "optimizer", "attention",
                                                  "dropout", "framework"});
  r.micro_batch_size = t.integer("micro_batch_size", 1, kMaxDim);
  r.grad_accumulation_steps = t.integer("grad_accumulation_steps", 1, kMaxDim, 1);
  r.data_parallel_size = static_cast<int>(t.integer("data_parallel_size", 1, kMaxDim, 1));
  r.gpus_per_node = static_cast<int>(t.integer("gpus_per_node", 1, 1024, r.data_parallel_size));
  r.num_nodes = static_cast<int>(t.integer("num_nodes", 1, kMaxDim, 1));
  if (static_cast<long long>(r.gpus_per_node) * r.num_nodes != r.data_parallel_size)
    t.fail_message("data_parallel_size", "must equal gpus_per_node x num_nodes (" + std::to_string(r.gpus_per_node) +
                                             " x " + std::to_string(r.num_nodes) +
                                             "): trainsim-train runs one data-parallel replica per GPU");
  r.precision = t.choice("precision", {"bf16", "fp16", "fp32"}, "bf16");
  t.choice("optimizer", {"adamw"}, "adamw");
  t.choice("attention", {"flash"}, "flash");
  r.dropout = t.number("dropout", 0.0, 1.0, 0.0);
  // A run without "framework" is trainsim-train's when its tool says so (files written
  // before the key existed), else the fused op list's.
  const bool trainer = r.tool.rfind("trainsim-train", 0) == 0;
  r.framework = t.choice("framework", {"fused", "pytorch_eager", "trainsim_train"}, trainer ? "trainsim_train" : "fused");
}

void read_measurements(const ObjectReader& root, MeasuredRun& r) {
  r.warmup_steps = root.integer("warmup_steps", 0, std::numeric_limits<int>::max(), 0);
  const ObjectReader st = root.object("step_time_s", {"median", "mean", "min", "max", "steps_timed"});
  r.step_median_s = st.number("median", 1e-9, kInf);
  st.number("mean", 1e-9, kInf, r.step_median_s);
  r.step_min_s = st.number("min", 1e-9, r.step_median_s, r.step_median_s);
  r.step_max_s = st.number("max", r.step_median_s, kInf, r.step_median_s);
  r.steps_timed = st.integer("steps_timed", 1, std::numeric_limits<int>::max());

  std::vector<std::string_view> names(config::kKernelClasses.begin(), config::kKernelClasses.end());
  const ObjectReader k = root.object("kernel_class_s", names);
  for (std::size_t i = 0; i < config::kKernelClasses.size(); ++i)
    r.kernel_class_s[i] = k.number(config::kKernelClasses[i], 0.0, kInf, 0.0);

  if (root.has_non_null("peak_memory_bytes")) r.peak_memory_bytes = root.number("peak_memory_bytes", 1.0, kInf);
  r.peak_memory_source = root.text("peak_memory_source", "");
  if (root.has_non_null("loss")) {
    const ObjectReader l = root.object("loss", {"initial", "final", "held_out", "held_out_tokens"});
    if (l.has_non_null("initial")) r.loss_initial = l.number("initial", 0.0, kInf);
    if (l.has_non_null("final")) r.loss_final = l.number("final", 0.0, kInf);
    if (l.has_non_null("held_out")) r.loss_held_out = l.number("held_out", 0.0, kInf);
    l.integer("held_out_tokens", 0, std::numeric_limits<long long>::max(), 0);
  }
}

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

}  // namespace

MeasuredRun parse_measured_run(std::string_view text, const std::string& file) {
  const nlohmann::json doc = parse_document(text, file, "measured run");
  const ObjectReader root(doc, file, "",
                          {"format", "version", "tool", "date", "command", "device", "model", "training",
                           "warmup_steps", "steps", "step_time_s", "kernel_class_s", "peak_memory_bytes",
                           "peak_memory_source", "loss", "timeline"});
  if (root.text("format") != "trainsim-measured-run")
    root.fail("format", "\"trainsim-measured-run\" (a file trainsim-train writes)", root.raw("format"));
  root.integer("version", kFormatVersion, kFormatVersion);
  MeasuredRun r;
  r.file = file;
  r.tool = root.text("tool", "");
  root.text("date", "");
  root.text("command", "");
  const ObjectReader d = root.object("device", {"name", "count", "nodes", "driver", "cuda", "cublas", "nccl"});
  r.device_name = d.text("name");
  r.device_count = static_cast<int>(d.integer("count", 1, kMaxDim, 1));
  d.integer("nodes", 1, kMaxDim, 1);
  for (const char* key : {"driver", "cuda", "cublas", "nccl"}) d.text(key, "");
  read_model(root, r);
  read_training(root, r);
  if (root.has("steps") && !root.raw("steps").is_array())
    root.fail("steps", "an array of {step, time_s, loss, tokens}", root.raw("steps"));
  read_measurements(root, r);
  if (root.has_non_null("timeline")) {
    const std::filesystem::path t(root.text("timeline"));
    r.timeline = t.is_relative() ? (std::filesystem::path(file).parent_path() / t).lexically_normal() : t;
  }
  return r;
}

MeasuredRun read_measured_run(const std::filesystem::path& path) {
  return parse_measured_run(read_document_file(path, "measured run"), path.string());
}

std::optional<std::string> gpu_preset_for_device(std::string_view device_name) {
  // nvidia-smi / cudaGetDeviceProperties names, e.g. "NVIDIA H100 80GB HBM3",
  // "NVIDIA A100-SXM4-80GB", "NVIDIA H200", "NVIDIA B200".
  const std::string name = lower(device_name);
  // Longer names first: "gb200" holds "b200".
  const std::pair<std::string_view, std::string_view> known[] = {
      {"gb300", "GB300"},   {"gb200", "GB200"},   {"b300", "B300"},     {"h200", "H200-SXM-141GB"},
      {"h100", "H100-SXM5-80GB"}, {"a100", "A100-SXM4-80GB"}, {"b200", "B200"}, {"mi300x", "MI300X"},
      {"mi325x", "MI325X"}, {"mi355x", "MI355X"}};
  for (const auto& [token, preset] : known)
    if (name.find(token) != std::string::npos) return std::string(preset);
  return std::nullopt;
}

config::Scenario scenario_for_measured_run(const MeasuredRun& run, const MeasuredScenarioOptions& options) {
  std::string gpu;
  if (options.gpu) {
    gpu = *options.gpu;
  } else if (auto preset = gpu_preset_for_device(run.device_name)) {
    gpu = *preset;
  } else {
    throw ScenarioError(run.file, "/device/name", "a device with a GPU preset (H100, H200, A100, B200, B300, GB200, GB300, MI300X, MI325X, MI355X), or --gpu PRESET",
                        "\"" + run.device_name + "\"");
  }
  const nlohmann::json doc = {
      {"name", "validate " + std::filesystem::path(run.file).filename().string()},
      {"cluster", {{"gpu", gpu}, {"num_nodes", run.num_nodes}, {"gpus_per_node", run.gpus_per_node}}},
      {"model",
       {{"num_layers", run.num_layers},
        {"hidden_size", run.hidden_size},
        {"ffn_hidden_size", run.ffn_hidden_size},
        {"num_attention_heads", run.num_attention_heads},
        {"num_query_groups", run.num_attention_heads},
        {"seq_length", run.seq_length},
        {"max_position_embeddings", run.max_position_embeddings},
        {"vocab_size", run.vocab_size},
        {"swiglu", false},
        {"untie_embeddings", !run.tied_embeddings},
        {"normalization", "LayerNorm"},
        {"position_embedding_type", "learned_absolute"},
        {"add_bias_linear", true},
        {"hidden_dropout", run.dropout},
        {"attention_dropout", run.dropout}}},
      {"training",
       {{"global_batch_size", run.micro_batch_size * run.grad_accumulation_steps * run.data_parallel_size},
        {"micro_batch_size", run.micro_batch_size},
        {"precision", run.precision},
        {"optimizer", "adamw"},
        {"framework", run.framework}}},
      {"parallelism", {{"tp", 1}, {"pp", 1}, {"dp", run.data_parallel_size},
        {"recompute_granularity", "none"},
        {"overlap_grad_reduce", true}}},
      {"simulation", {{"iterations", 1}}}};
  ReadOptions read;
  read.calibration = options.calibration;
  // Messages about the built scenario name it apart from the run file, whose
  // own fields have been checked above.
  return parse_scenario_text(doc.dump(), run.file + " (as a scenario)", read);
}

}  // namespace trainsim::scenario
