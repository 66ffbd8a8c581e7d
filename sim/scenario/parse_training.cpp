// Parses "training" and "simulation" ("parallelism": parse_parallelism.cpp;
// "failures": parse_failures.cpp).
#include <algorithm>
#include <array>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "scenario/errors.h"
#include "scenario/parse_sections.h"
#include "scenario/unmodeled_keys.h"

namespace trainsim::scenario {

namespace {
constexpr long long kMaxBatch = 1'000'000'000;
// What each single-program op list runs (docs/model.md): bf16 with fp32 gradients,
// AdamW, fused attention and the program's own loss; a training key saying otherwise
// is an error naming it.
struct ProgramTraining {
  std::string_view precision, gradients, optimizer, attention, loss;
};

void check_program_training(const ObjectReader& t, const workload::TrainingConfig& c, std::string_view name) {
  const ProgramTraining what =
      c.framework == workload::Framework::kPytorchEager
          ? ProgramTraining{"torch.autocast(dtype=torch.bfloat16), precision \"bf16\"",
                            "fp32 gradients of fp32 parameters", "torch.optim.AdamW(fused=True)",
                            "F.scaled_dot_product_attention (a fused kernel, \"flash\")",
                            "F.cross_entropy (its own fp32 kernels), so cross_entropy"}
          : ProgramTraining{"trainsim-train's bf16 step, precision \"bf16\"", "its fp32 gradients", "its AdamW",
                            "its flash attention kernels", "its fused softmax + cross-entropy kernel, so cross_entropy"};
  const auto only = [&](std::string_view key, bool ok, std::string_view models) {
    if (!ok)
      t.fail_message(key, fmt::format("\"framework\": \"{}\" models {}; {} is not modeled with it", name, models, key));
  };
  only("precision", c.precision == hw::Precision::kBf16, what.precision);
  only("grad_reduce_dtype", c.grad_reduce_dtype == hw::Precision::kFp32, what.gradients);
  only("optimizer", c.optimizer == workload::Optimizer::kAdam, what.optimizer);
  only("attention_backend", c.attention_backend == workload::AttentionBackend::kFlash, what.attention);
  only("cross_entropy", !t.has("cross_entropy"), what.loss);
}

// Megatron-Core's first_last_layers_bf16 and its two counts (default 1 each), which
// apply to fp8 and fp4 recipes only.
void parse_bf16_layers(const ObjectReader& t, const workload::ModelConfig& model, workload::TrainingConfig& c) {
  const bool on = t.boolean("first_last_layers_bf16", false);
  for (const char* key : {"num_layers_at_start_in_bf16", "num_layers_at_end_in_bf16"})
    if (t.has(key) && !on)
      t.fail_message(key, fmt::format("{} applies with first_last_layers_bf16 true only", key));
  if (!on) return;
  if (!hw::quantized_gemms(c.precision))
    t.fail_message("first_last_layers_bf16",
                   fmt::format("first_last_layers_bf16 keeps layers of an fp8 or fp4 recipe in bf16; precision is "
                               "\"{}\"",
                               hw::to_string(c.precision)));
  c.bf16_first_layers = static_cast<int>(t.integer("num_layers_at_start_in_bf16", 0, model.num_layers, 1));
  c.bf16_last_layers = static_cast<int>(t.integer("num_layers_at_end_in_bf16", 0, model.num_layers, 1));
  if (c.bf16_first_layers + c.bf16_last_layers > model.num_layers)
    t.fail_message("num_layers_at_end_in_bf16",
                   fmt::format("num_layers_at_start_in_bf16 ({}) + num_layers_at_end_in_bf16 ({}) exceed num_layers ({})",
                               c.bf16_first_layers, c.bf16_last_layers, model.num_layers));
}

// torchtitan's training.compile: false runs its Llama model code eager, which only a
// Llama-style decoder (RMSNorm, rotary positions, SwiGLU, no biases, dense, no QK norm
// or latent attention) describes.
void parse_compile(const ObjectReader& t, const workload::ModelConfig& model, workload::TrainingConfig& c) {
  c.torch_compile = t.boolean("compile", true);
  if (c.torch_compile) return;
  if (c.framework != workload::Framework::kFused)
    t.fail_message("compile", "compile false (torchtitan's Llama model code run eager) applies to framework \"fused\" "
                              "(the default); \"pytorch_eager\" and \"trainsim_train\" are eager programs of their own");
  const auto need = [&](bool ok, std::string_view what) {
    if (!ok)
      t.fail_message("compile", fmt::format("compile false prices torchtitan's Llama block op by op, which needs {}; use "
                                            "compile true (the fused kernels torch.compile or Transformer Engine run)",
                                            what));
  };
  need(model.normalization == workload::Normalization::kRmsNorm, "model.normalization \"RMSNorm\"");
  need(model.position_embedding == workload::PositionEmbedding::kRope, "model.position_embedding_type \"rope\"");
  need(model.swiglu, "model.swiglu true");
  need(!model.add_bias_linear, "model.add_bias_linear false");
  need(!model.multi_latent_attention && !model.qk_layernorm, "standard attention (no multi_latent_attention, no qk_layernorm)");
  need(model.num_experts == 0, "a dense model (no experts)");
}

// apply_rope_fusion (Megatron-LM's name; --no-rope-fusion): the rotary embeddings as one
// fused kernel or as the rotate-half PyTorch ops. Only the fused program's own rotary
// op reads it: latent attention prices its rotary part as one pass (mla_rope), and the
// eager programs list their rotary kernels themselves.
void parse_rope_fusion(const ObjectReader& t, const workload::ModelConfig& model, workload::TrainingConfig& c) {
  c.rope_fusion = t.boolean("apply_rope_fusion", true);
  if (!t.has("apply_rope_fusion")) return;
  if (model.position_embedding != workload::PositionEmbedding::kRope)
    t.fail_message("apply_rope_fusion", "apply_rope_fusion applies to rotary position embeddings; "
                                        "model.position_embedding_type is not \"rope\": remove it");
  if (model.multi_latent_attention && !c.rope_fusion)
    t.fail_message("apply_rope_fusion", "apply_rope_fusion false is not modeled with multi_latent_attention: its "
                                        "rotary part is priced as one pass (mla_rope, docs/model.md); remove it");
  if (c.framework != workload::Framework::kFused || !c.torch_compile)
    t.fail_message("apply_rope_fusion", "apply_rope_fusion applies to framework \"fused\" with compile true; the "
                                        "eager programs run their own rotary kernels: remove it");
}

// bias_activation_fusion (Megatron-Core's name; --no-bias-swiglu-fusion): false prices a
// dense SwiGLU's activation as silu(gate) * up in PyTorch ops. GELU (one kernel either
// way without a bias) and the experts' activations keep the fused kernel.
void parse_activation_fusion(const ObjectReader& t, const workload::ModelConfig& model, workload::TrainingConfig& c) {
  c.bias_activation_fusion = t.boolean("bias_activation_fusion", true);
  if (c.bias_activation_fusion) return;
  const auto need = [&](bool ok, std::string_view what) {
    if (!ok)
      t.fail_message("bias_activation_fusion",
                     fmt::format("bias_activation_fusion false (silu(gate) * up as separate PyTorch kernels) is "
                                 "modeled for {}; remove it (the fused activation kernel is priced)",
                                 what));
  };
  need(model.swiglu, "SwiGLU MLPs (model.swiglu true); a GELU MLP's unfused bias add is not modeled");
  need(model.num_experts == 0, "dense models; the experts' activations are not modeled unfused");
  need(c.framework == workload::Framework::kFused && c.torch_compile,
       "framework \"fused\" with compile true; the eager programs run their own SwiGLU kernels");
}

// enable_cuda_graph: the pytorch_eager step captured whole as one CUDA graph on one GPU
// (docs/model.md, "CUDA graphs"). Megatron-Core's per-layer graphs of the fused step
// and a DDP step's capture are refused, with what to use instead.
void parse_cuda_graph(const ObjectReader& t, const hw::ClusterSpec& cluster, workload::TrainingConfig& c) {
  c.cuda_graph = t.boolean("enable_cuda_graph", false);
  if (!c.cuda_graph) return;
  if (c.framework != workload::Framework::kPytorchEager)
    t.fail_message("enable_cuda_graph",
                   "enable_cuda_graph is modeled for framework \"pytorch_eager\" (the step captured whole as one "
                   "CUDA graph and replayed, as torch.cuda.graph does); Megatron-Core's --enable-cuda-graph replays "
                   "each layer's kernels from graphs, removing the host's launch gaps, and is not modeled yet: remove "
                   "it, a Megatron-style step (framework \"fused\") is simulated without host launch costs already "
                   "(docs/model.md, \"Host dispatch\")");
  if (cluster.num_gpus() > 1)
    t.fail_message("enable_cuda_graph",
                   fmt::format("enable_cuda_graph with \"pytorch_eager\" is modeled on one GPU; this cluster has {} "
                               "(a DDP step's capture, NCCL inside the graph, is not modeled yet): use one GPU, or "
                               "remove it for the eager step with its host dispatch",
                               cluster.num_gpus()));
}

}  // namespace

namespace {

// Megatron-Core's CPU optimizer offload (optimizer_cpu_offload, its fraction and
// overlap; docs/model.md, "CPU optimizer offload"): the distributed optimizer is
// checked with the parallel layout (LayoutChecks::offload).
void parse_optimizer_offload(const ObjectReader& t, const hw::ClusterSpec& cluster, workload::TrainingConfig& c) {
  const bool on = t.boolean("optimizer_cpu_offload", false);
  for (std::string_view key : {"optimizer_offload_fraction", "overlap_cpu_optimizer_d2h_h2d"})
    if (!on && t.has_non_null(key))
      t.fail_message(key, fmt::format("{} applies with \"optimizer_cpu_offload\": true only", key));
  if (!on) return;
  // Megatron-LM's --optimizer-offload-fraction defaults to 1.0 (arguments.py).
  c.optimizer_offload_fraction = t.number("optimizer_offload_fraction", 0.0, 1.0, 1.0);
  c.overlap_cpu_optimizer_d2h_h2d = t.boolean("overlap_cpu_optimizer_d2h_h2d", false);
  const auto refuse = [&](std::string_view why) {
    t.fail_message("optimizer_cpu_offload", fmt::format("optimizer_cpu_offload {}", why));
  };
  if (c.optimizer != workload::Optimizer::kAdam)
    refuse("runs Megatron-Core's HybridDeviceOptimizer, which is AdamW (torch.optim.AdamW on the host, "
           "Transformer Engine's FusedAdam on the GPU): optimizer \"adam\" or \"adamw\"");
  if (c.framework != workload::Framework::kFused)
    refuse("is Megatron-Core's (\"framework\": \"fused\")");
  if (!cluster.host.link_known())
    refuse("copies gradients to host memory and parameters back: it needs the GPU's host link, "
           "cluster.host.device_to_host and host_to_device (the GPU's preset has no platform.host)");
  if (!(cluster.host.cpu_adam_rate > 0.0))
    refuse("needs the host CPUs' Adam rate, cluster.host.cpu_adam_rate (parameters per second, all of a node's "
           "cores on fp32 master weights and moments): no preset has a published figure for its host; "
           "trainsim-cpu-adam measures one on the node");
}

// Megatron-LM's --fp8-recipe and --fp8-param-gather (docs/model.md, "FP8 recipes"); the
// layout's half of fp8_param_gather (the distributed optimizer) is checked with the
// parallelism.
void parse_fp8_recipe(const ObjectReader& t, const hw::ClusterSpec& cluster, workload::TrainingConfig& c) {
  const bool fp8 = c.precision == hw::Precision::kFp8;
  for (std::string_view key : {"fp8_recipe", "fp8_param_gather"})
    if (!fp8 && t.has_non_null(key) && t.raw(key) != false)
      t.fail_message(key, fmt::format("{} is a setting of an fp8 recipe; precision is \"{}\" (set \"fp8\", or "
                                      "remove it)",
                                      key, hw::to_string(c.precision)));
  const std::string recipe = t.choice("fp8_recipe", {"delayed", "tensorwise", "mxfp8", "blockwise"}, "delayed");
  c.fp8_recipe = recipe == "tensorwise" ? workload::Fp8Recipe::kTensorwise
                 : recipe == "mxfp8"    ? workload::Fp8Recipe::kMxfp8
                 : recipe == "blockwise" ? workload::Fp8Recipe::kBlockwise
                                         : workload::Fp8Recipe::kDelayed;
  c.fp8_param_gather = t.boolean("fp8_param_gather", false);
  // Megatron-LM's --fp4-recipe: Transformer Engine's NVFP4BlockScaling, the one it has.
  if (t.has_non_null("fp4_recipe") && c.precision != hw::Precision::kFp4)
    t.fail_message("fp4_recipe", fmt::format("fp4_recipe is a setting of an fp4 recipe; precision is \"{}\"",
                                             hw::to_string(c.precision)));
  // The recipe's format: the GPU's first by default; every GPU of a mixed cluster runs it.
  const std::vector<std::string>& formats = cluster.gpu.fp4_formats;
  const std::string recipe4 = t.choice("fp4_recipe", {"nvfp4", "mxfp4"}, formats.empty() ? "nvfp4" : formats.front());
  c.fp4_recipe = recipe4 == "mxfp4" ? workload::Fp4Recipe::kMxfp4 : workload::Fp4Recipe::kNvfp4;
  if (c.precision == hw::Precision::kFp4)
    for (int k = 0; k < cluster.num_pools(); ++k) {
      const hw::GpuSpec& gpu = cluster.pool_gpu(k);
      if (std::find(gpu.fp4_formats.begin(), gpu.fp4_formats.end(), recipe4) == gpu.fp4_formats.end())
        t.fail_message("fp4_recipe", fmt::format("{}'s tensor cores run fp4 as {}, not \"{}\"{}", gpu.name,
                                                 fmt::join(gpu.fp4_formats, ", "), recipe4,
                                                 t.has_non_null("fp4_recipe") ? "" : " (the cluster's GPU's default)"));
    }
  if (t.has_non_null("fp4_param_gather") && t.raw("fp4_param_gather") != false &&
      c.precision != hw::Precision::kFp4)
    t.fail_message("fp4_param_gather", fmt::format("fp4_param_gather is a setting of an fp4 recipe; precision is "
                                                   "\"{}\" (set \"fp4\", or remove it)",
                                                   hw::to_string(c.precision)));
  c.fp4_param_gather = t.boolean("fp4_param_gather", false);
  if (c.fp4_param_gather && c.fp4_recipe == workload::Fp4Recipe::kMxfp4)
    t.fail_message("fp4_param_gather", "fp4_param_gather is Megatron-Core's NVFP4 gather; with fp4_recipe \"mxfp4\" "
                                       "it is not modeled: remove it (16-bit gathers)");
  c.disable_parameter_transpose_cache = t.boolean("disable_parameter_transpose_cache", false);
  if (c.fp8_param_gather && c.fp8_recipe == workload::Fp8Recipe::kBlockwise)
    t.fail_message("fp8_param_gather", "fp8_param_gather with fp8_recipe \"blockwise\" is not modeled yet: remove "
                                       "it (16-bit gathers) or choose the recipe that ran");
}

}  // namespace

workload::TrainingConfig parse_training(const ObjectReader& root, const hw::ClusterSpec& cluster,
                                        const workload::ModelConfig& model) {
  const ObjectReader t =
      root.object("training", with_unmodeled({"global_batch_size", "micro_batch_size", "precision", "train_tokens",
                                              "optimizer", "grad_reduce_dtype", "attention_backend", "cross_entropy",
                                              "framework", "first_last_layers_bf16", "num_layers_at_start_in_bf16",
                                              "num_layers_at_end_in_bf16", "fp8_recipe", "fp8_param_gather", "fp4_recipe", "fp4_param_gather",
                                              "disable_parameter_transpose_cache", "tp_backward", "optimizer_cpu_offload",
                                              "optimizer_offload_fraction", "overlap_cpu_optimizer_d2h_h2d",
                                              "cpu_offloading", "cpu_offloading_num_layers", "compile", "use_train_metrics",
                                              "enable_cuda_graph", "apply_rope_fusion", "bias_activation_fusion"},
                                             unmodeled_training_keys()));
  refuse_unmodeled(t, unmodeled_training_keys());
  // Activation offload is a layout switch, read with recompute_granularity.
  for (std::string_view key : {"cpu_offloading", "cpu_offloading_num_layers"})
    if (t.has(key))
      t.fail_message(key, fmt::format("{} is read from \"parallelism\" (Megatron-Core's TransformerConfig, beside "
                                      "recompute_granularity): move it there",
                                      key));
  workload::TrainingConfig c;
  c.global_batch_size = t.integer("global_batch_size", 1, kMaxBatch);
  c.micro_batch_size = t.integer("micro_batch_size", 1, kMaxBatch, 1);
  if (c.micro_batch_size > c.global_batch_size)
    t.fail_message("micro_batch_size", fmt::format("micro_batch_size ({}) exceeds global_batch_size ({})",
                                                   c.micro_batch_size, c.global_batch_size));
  c.precision =
      *hw::precision_from_string(t.choice("precision", {"fp32", "tf32", "fp16", "bf16", "fp8", "fp4"}, "bf16"));
  // Every GPU of a mixed cluster runs the job's precision.
  for (int k = 0; k < cluster.num_pools(); ++k) {
    const hw::GpuSpec& gpu = cluster.pool_gpu(k);
    if (gpu.supports(c.precision)) continue;
    std::vector<std::string_view> supported;
    for (const auto& [p, _] : gpu.peak_flops) supported.push_back(hw::to_string(p));
    t.fail_message("precision",
                   fmt::format("{}{} has no {} peak in its GPU spec{}; it has {}", gpu.name,
                               cluster.pools.empty() ? "" : fmt::format(" (cluster.pools[{}])", k),
                               hw::to_string(c.precision),
                               t.has_non_null("precision") ? "" : " (training.precision defaults to bf16)",
                               fmt::join(supported, ", ")));
  }
  // Megatron-LM accumulates and all-reduces fp32 main gradients with bf16
  // (accumulate_allreduce_grads_in_fp32); otherwise gradients keep the training type.
  const std::string default_grad =
      c.precision == hw::Precision::kBf16 || hw::quantized_gemms(c.precision) || c.precision == hw::Precision::kTf32
          ? "fp32"
          : std::string(hw::to_string(c.precision));
  c.grad_reduce_dtype = *hw::precision_from_string(t.choice("grad_reduce_dtype", {"fp32", "bf16", "fp16", "fp8"},
                                                            default_grad));
  if (t.has_non_null("train_tokens")) c.train_tokens = t.quantity("train_tokens", Dimension::kCount, 1.0, 1e18);
  const std::string opt = t.choice("optimizer", {"adam", "adamw", "sgd"}, "adam");
  c.optimizer = opt == "sgd" ? workload::Optimizer::kSgd : workload::Optimizer::kAdam;
  const std::string attention = t.choice("attention_backend", {"flash", "flash2", "unfused"}, "flash");
  c.attention_backend = attention == "unfused"  ? workload::AttentionBackend::kUnfused
                        : attention == "flash2" ? workload::AttentionBackend::kFlash2
                                                : workload::AttentionBackend::kFlash;
  const std::string loss = t.choice("cross_entropy", {"fused", "unfused", "torch"}, "fused");
  c.cross_entropy = loss == "unfused" ? workload::CrossEntropy::kUnfused
                    : loss == "torch" ? workload::CrossEntropy::kTorch
                                      : workload::CrossEntropy::kFused;
  const std::string framework = t.choice("framework", {"fused", "pytorch_eager", "trainsim_train"}, "fused");
  c.framework = framework == "pytorch_eager"    ? workload::Framework::kPytorchEager
                : framework == "trainsim_train" ? workload::Framework::kTrainsimTrain
                                                : workload::Framework::kFused;
  if (c.framework != workload::Framework::kFused) check_program_training(t, c, framework);
  parse_compile(t, model, c);
  parse_rope_fusion(t, model, c);
  parse_activation_fusion(t, model, c);
  parse_cuda_graph(t, cluster, c);
  if (t.boolean("use_train_metrics", false)) {
    if (c.framework != workload::Framework::kFused)
      t.fail_message("use_train_metrics", "use_train_metrics (LLM Foundry's training metrics, Composer's) applies to "
                                          "framework \"fused\"; the eager programs compute none");
    c.train_metric_passes = 2;  // LanguageCrossEntropy, LanguagePerplexity
  }
  c.tp_backward = t.choice("tp_backward", {"async", "sync"}, "async") == "sync" ? workload::TpBackward::kSync
                                                                              : workload::TpBackward::kAsync;
  parse_bf16_layers(t, model, c);
  // Megatron-Core's --fp8-param-gather (docs/model.md, "FP8 recipes"); the layout's
  // half (the distributed optimizer) is checked with the parallelism.
  parse_fp8_recipe(t, cluster, c);
  parse_optimizer_offload(t, cluster, c);
  return c;
}

config::SimulationOptions parse_simulation(const ObjectReader& root) {
  config::SimulationOptions s;
  if (!root.has("simulation")) return s;
  const ObjectReader o = root.object("simulation", {"network_model", "iterations", "seed", "collective_algorithm"});
  const std::string model = o.choice("network_model", {"analytic", "flow"}, "flow");
  s.network_model = model == "flow" ? config::NetworkModel::kFlow : config::NetworkModel::kAnalytic;
  s.iterations = static_cast<int>(o.integer("iterations", 1, 1000, 1));
  s.seed = static_cast<std::uint64_t>(o.integer("seed", 0, INT64_MAX, 1));
  const std::string algo = o.choice(
      "collective_algorithm", {"auto", "ring", "tree", "halving_doubling", "hierarchical", "nvls", "direct", "pairwise"},
      "auto");
  s.collective_algorithm = *net::algorithm_from_string(algo);
  return s;
}

}  // namespace trainsim::scenario
