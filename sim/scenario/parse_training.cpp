// Parses "training", "parallelism" and "simulation" ("failures": parse_failures.cpp).
#include <array>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "scenario/errors.h"
#include "scenario/parse_sections.h"

namespace trainsim::scenario {

namespace {
constexpr long long kMaxBatch = 1'000'000'000;
constexpr long long kMaxParallel = 1'000'000;
// "framework": "pytorch_eager" and "trainsim_train" are single programs (docs/model.md,
// "PyTorch eager", "trainsim-train"): a GPT-2 block, and only the layouts they run.
// Anything else would need kernels their op lists do not have (DDP's bucket copies,
// gradient accumulation's adds, checkpointing, RMSNorm, rotary embeddings, ...).
void check_gpt2_block(const ObjectReader& root, const workload::ModelConfig& model, std::string_view framework) {
  std::vector<std::string_view> unlike;
  if (model.is_moe()) unlike.emplace_back("num_experts > 1");
  if (model.swiglu) unlike.emplace_back("swiglu");
  if (model.normalization != workload::Normalization::kLayerNorm) unlike.emplace_back("normalization RMSNorm");
  if (model.position_embedding != workload::PositionEmbedding::kLearnedAbsolute)
    unlike.emplace_back("position_embedding_type rope");
  if (model.num_query_groups != model.num_attention_heads) unlike.emplace_back("num_query_groups != heads");
  if (model.hidden_dropout > 0.0 || model.attention_dropout > 0.0) unlike.emplace_back("dropout > 0");
  if (!unlike.empty())
    throw ScenarioError(root.file(), "/model",
                        fmt::format("\"framework\": \"{}\" models a GPT-2 block (LayerNorm, GELU MLP, "
                                    "learned positions, multi-head attention, no dropout); this model has {}",
                                    framework, fmt::join(unlike, ", ")));
}

// The layouts the two single-program op lists model (docs/model.md, "PyTorch eager",
// "trainsim-train"): no model parallelism, sharding, recomputation or asynchronous mode;
// trainsim-train runs synchronous data-parallel replicas with gradient accumulation,
// the PyTorch eager program one GPU and one optimizer step per micro-batch.
void check_program_layout(const ObjectReader& root, const ObjectReader& o, const workload::ModelConfig& model,
                          const workload::TrainingConfig& training, const workload::ParallelConfig& p) {
  const bool eager = training.framework == workload::Framework::kPytorchEager;
  const std::string_view name = eager ? "pytorch_eager" : "trainsim_train";
  const std::string_view models = eager ? "one GPU without model parallelism, sharding or checkpointing"
                                        : "data-parallel replicas without model parallelism, sharding or recomputation";
  const auto parallel = [&](std::string_view key, bool ok, std::string_view what) {
    if (!ok)
      o.fail_message(key, fmt::format("\"framework\": \"{}\" models {}; {} is not modeled with it", name, models, what));
  };
  parallel("tensor_model_parallel_size", p.tensor == 1, "tensor parallelism");
  parallel("pipeline_model_parallel_size", p.pipeline == 1, "pipeline parallelism");
  parallel("context_parallel_size", p.context == 1, "context parallelism");
  parallel("expert_model_parallel_size", p.expert == 1, "expert parallelism");
  if (eager) parallel("data_parallel_size", p.data == 1, "data parallelism (DDP)");
  parallel("zero_stage", p.zero_stage == 0, "ZeRO");
  parallel("recompute_granularity", p.recompute == workload::Recompute::kNone, "activation recomputation");
  parallel("mode", p.mode == workload::TrainingMode::kSync, "an asynchronous mode");
  if (eager && training.global_batch_size != training.micro_batch_size)
    throw ScenarioError(root.file(), "/training/global_batch_size",
                        fmt::format("\"framework\": \"pytorch_eager\" models one optimizer step per micro-batch; "
                                    "global_batch_size ({}) must equal micro_batch_size ({}) (gradient accumulation "
                                    "is not modeled with it)",
                                    training.global_batch_size, training.micro_batch_size));
  check_gpt2_block(root, model, name);
}

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

}  // namespace

workload::TrainingConfig parse_training(const ObjectReader& root, const hw::ClusterSpec& cluster) {
  const ObjectReader t =
      root.object("training", {"global_batch_size", "micro_batch_size", "precision", "train_tokens", "optimizer",
                               "grad_reduce_dtype", "attention_backend", "cross_entropy", "framework"});
  workload::TrainingConfig c;
  c.global_batch_size = t.integer("global_batch_size", 1, kMaxBatch);
  c.micro_batch_size = t.integer("micro_batch_size", 1, kMaxBatch, 1);
  if (c.micro_batch_size > c.global_batch_size)
    t.fail_message("micro_batch_size", fmt::format("micro_batch_size ({}) exceeds global_batch_size ({})",
                                                   c.micro_batch_size, c.global_batch_size));
  c.precision = *hw::precision_from_string(t.choice("precision", {"fp32", "tf32", "fp16", "bf16", "fp8"}, "bf16"));
  if (!cluster.gpu.supports(c.precision)) {
    std::vector<std::string_view> supported;
    for (const auto& [p, _] : cluster.gpu.peak_flops) supported.push_back(hw::to_string(p));
    t.fail_message("precision",
                   fmt::format("{} has no {} peak in its GPU spec{}; it has {}", cluster.gpu.name,
                               hw::to_string(c.precision),
                               t.has_non_null("precision") ? "" : " (training.precision defaults to bf16)",
                               fmt::join(supported, ", ")));
  }
  // Megatron-LM accumulates and all-reduces fp32 main gradients with bf16
  // (accumulate_allreduce_grads_in_fp32); otherwise gradients keep the training type.
  const std::string default_grad =
      c.precision == hw::Precision::kBf16 || c.precision == hw::Precision::kFp8 || c.precision == hw::Precision::kTf32
          ? "fp32"
          : std::string(hw::to_string(c.precision));
  c.grad_reduce_dtype = *hw::precision_from_string(t.choice("grad_reduce_dtype", {"fp32", "bf16", "fp16", "fp8"},
                                                            default_grad));
  if (t.has_non_null("train_tokens")) c.train_tokens = t.quantity("train_tokens", Dimension::kCount, 1.0, 1e18);
  const std::string opt = t.choice("optimizer", {"adam", "adamw", "sgd"}, "adam");
  c.optimizer = opt == "sgd" ? workload::Optimizer::kSgd : workload::Optimizer::kAdam;
  c.attention_backend = t.choice("attention_backend", {"flash", "unfused"}, "flash") == "unfused"
                            ? workload::AttentionBackend::kUnfused
                            : workload::AttentionBackend::kFlash;
  c.cross_entropy = t.choice("cross_entropy", {"fused", "unfused"}, "fused") == "unfused"
                        ? workload::CrossEntropy::kUnfused
                        : workload::CrossEntropy::kFused;
  const std::string framework = t.choice("framework", {"fused", "pytorch_eager", "trainsim_train"}, "fused");
  c.framework = framework == "pytorch_eager"    ? workload::Framework::kPytorchEager
                : framework == "trainsim_train" ? workload::Framework::kTrainsimTrain
                                                : workload::Framework::kFused;
  if (c.framework != workload::Framework::kFused) check_program_training(t, c, framework);
  return c;
}

namespace {

// The parallel sizes, data parallelism resolved from "auto", and what the model and
// batch allow of them.
void parse_sizes(const ObjectReader& root, const ObjectReader& o, long long gpus, const workload::ModelConfig& model,
                 const workload::TrainingConfig& training, workload::ParallelConfig& p) {
  p.tensor = static_cast<int>(o.integer("tensor_model_parallel_size", 1, kMaxParallel, 1));
  p.pipeline = static_cast<int>(o.integer("pipeline_model_parallel_size", 1, kMaxParallel, 1));
  p.context = static_cast<int>(o.integer("context_parallel_size", 1, kMaxParallel, 1));
  p.expert = static_cast<int>(o.integer("expert_model_parallel_size", 1, kMaxParallel, 1));
  const long long mp = p.model_parallel_size();
  if (gpus % mp != 0) {
    // Point at the size that does not divide the GPU count, else at the first one given.
    const std::array<std::pair<std::string_view, int>, 3> sizes{{{"tensor_model_parallel_size", p.tensor},
                                                                 {"pipeline_model_parallel_size", p.pipeline},
                                                                 {"context_parallel_size", p.context}}};
    std::string_view culprit;
    for (const auto& [key, size] : sizes)
      if (culprit.empty() && gpus % size != 0) culprit = key;
    for (const auto& [key, size] : sizes)
      if (culprit.empty() && size > 1) culprit = key;
    if (culprit.empty()) culprit = "tensor_model_parallel_size";
    o.fail_message(culprit,
                   fmt::format("tensor ({}) x pipeline ({}) x context ({}) parallel = {} does not divide the {} GPUs",
                               p.tensor, p.pipeline, p.context, mp, gpus));
  }
  if (o.has_non_null("data_parallel_size") && o.raw("data_parallel_size").is_string()) {
    if (o.raw("data_parallel_size") != "auto")
      o.fail("data_parallel_size", "an integer or \"auto\"", o.raw("data_parallel_size"));
    p.data = static_cast<int>(gpus / mp);
  } else {
    p.data = static_cast<int>(o.integer("data_parallel_size", 1, kMaxParallel, gpus / mp));
    if (p.data * mp != gpus)
      o.fail_message("data_parallel_size",
                     fmt::format("tensor ({}) x pipeline ({}) x context ({}) x data ({}) parallel = {} but the cluster "
                                 "has {} GPUs; use \"auto\" or a matching size",
                                 p.tensor, p.pipeline, p.context, p.data, mp * p.data, gpus));
  }
  if (training.global_batch_size % (training.micro_batch_size * p.data) != 0)
    throw ScenarioError(root.file(), "/training/global_batch_size",
                        fmt::format("global_batch_size ({}) must be divisible by micro_batch_size ({}) x "
                                    "data_parallel_size ({}) = {}",
                                    training.global_batch_size, training.micro_batch_size, p.data,
                                    training.micro_batch_size * p.data));
  if (model.num_attention_heads % p.tensor != 0 || model.num_query_groups % p.tensor != 0)
    o.fail_message("tensor_model_parallel_size",
                   fmt::format("tensor_model_parallel_size ({}) must divide num_attention_heads ({}) and "
                               "num_query_groups ({})",
                               p.tensor, model.num_attention_heads, model.num_query_groups));
  if (p.pipeline > model.num_layers)
    o.fail_message("pipeline_model_parallel_size",
                   fmt::format("pipeline_model_parallel_size ({}) exceeds num_layers ({})", p.pipeline,
                               model.num_layers));
  if (p.expert > 1 && (!model.is_moe() || model.num_experts % p.expert != 0))
    o.fail_message("expert_model_parallel_size",
                   fmt::format("expert_model_parallel_size ({}) must divide num_experts ({})", p.expert,
                               model.num_experts));
  // Megatron-LM: experts are carved out of the data-parallel ranks.
  if (p.expert > 1 && p.data % p.expert != 0)
    o.fail_message("expert_model_parallel_size",
                   fmt::format("expert_model_parallel_size ({}) must divide data_parallel_size ({})", p.expert,
                               p.data));
  // Megatron-LM asserts sequence parallelism for MoE with tensor parallelism:
  // the token dispatcher works on the sequence-split tokens.
  if (model.is_moe() && p.tensor > 1 && !o.boolean("sequence_parallel", false))
    o.fail_message("sequence_parallel",
                   fmt::format("a mixture-of-experts model with tensor_model_parallel_size {} needs "
                               "\"sequence_parallel\": true (as Megatron-LM)",
                               p.tensor));
  if (p.context > 1) {
    // Load-balanced ring attention splits each sequence into 2 x cp chunks.
    if (model.seq_length % (2LL * p.context) != 0)
      o.fail_message("context_parallel_size",
                     fmt::format("context_parallel_size ({}) needs seq_length ({}) divisible by 2 x {} (the "
                                 "load-balanced ring splits each sequence into 2 cp chunks)",
                                 p.context, model.seq_length, p.context));
    if (training.attention_backend != workload::AttentionBackend::kFlash)
      o.fail_message("context_parallel_size",
                     "context parallelism runs ring attention on fused (flash) attention; set "
                     "training.attention_backend to \"flash\"");
  }
}

// Sequence parallelism, ZeRO, recomputation, overlaps and the pipeline schedule.
void parse_options_and_schedule(const ObjectReader& root, const ObjectReader& o, const workload::ModelConfig& model,
                                const workload::TrainingConfig& training, workload::ParallelConfig& p) {
  if (o.has_non_null("num_layers_per_virtual_pipeline_stage"))
    p.layers_per_virtual_stage =
        static_cast<int>(o.integer("num_layers_per_virtual_pipeline_stage", 1, model.num_layers));
  p.sequence_parallel = o.boolean("sequence_parallel", false);
  p.zero_stage = static_cast<int>(o.integer("zero_stage", 0, 3, 0));
  const std::string recompute = o.has("recompute_granularity") && o.raw("recompute_granularity").is_null()
                                    ? "none"
                                    : o.choice("recompute_granularity", {"none", "selective", "full"}, "none");
  p.recompute = recompute == "full"        ? workload::Recompute::kFull
                : recompute == "selective" ? workload::Recompute::kSelective
                                           : workload::Recompute::kNone;
  p.overlap_grad_reduce = o.boolean("overlap_grad_reduce", false);
  p.overlap_param_gather = o.boolean("overlap_param_gather", false);
  const std::string schedule = o.choice("pipeline_schedule", {"gpipe", "1f1b", "interleaved_1f1b"}, "1f1b");
  p.schedule = schedule == "gpipe"  ? workload::PipelineSchedule::kGpipe
               : schedule == "1f1b" ? workload::PipelineSchedule::k1F1B
                                    : workload::PipelineSchedule::kInterleaved1F1B;
  // Megatron-LM runs the interleaved schedule whenever virtual stages are set.
  if (p.layers_per_virtual_stage) {
    if (o.has("pipeline_schedule") && p.schedule != workload::PipelineSchedule::kInterleaved1F1B)
      o.fail_message("pipeline_schedule", "num_layers_per_virtual_pipeline_stage needs \"interleaved_1f1b\"");
    p.schedule = workload::PipelineSchedule::kInterleaved1F1B;
    // The fullest stage's layers (uneven splits leave the last virtual stages a layer short).
    const long long per_stage = (model.num_layers + p.pipeline - 1) / p.pipeline;
    const long long chunks = per_stage / *p.layers_per_virtual_stage;
    if (p.pipeline < 2 || per_stage % *p.layers_per_virtual_stage != 0 || model.num_layers < chunks * p.pipeline)
      o.fail_message("num_layers_per_virtual_pipeline_stage",
                     fmt::format("num_layers_per_virtual_pipeline_stage ({}) must divide the {} layers of each of "
                                 "at least 2 pipeline stages (num_layers {} / pipeline_model_parallel_size {}, "
                                 "rounded up)",
                                 *p.layers_per_virtual_stage, per_stage, model.num_layers, p.pipeline));
    const long long microbatches = workload::microbatches_per_replica(training, p);
    if (microbatches % p.pipeline != 0)
      throw ScenarioError(root.file(), "/training/global_batch_size",
                          fmt::format("the interleaved schedule needs the micro-batches per replica ({}) to be a "
                                      "multiple of pipeline_model_parallel_size ({})",
                                      microbatches, p.pipeline));
  } else if (p.schedule == workload::PipelineSchedule::kInterleaved1F1B) {
    o.fail_message("pipeline_schedule", "\"interleaved_1f1b\" needs num_layers_per_virtual_pipeline_stage");
  }
}

// The training mode, ZeRO's limits, and the asynchronous modes' keys.
void parse_mode(const ObjectReader& o, long long gpus, workload::ParallelConfig& p) {
  const std::string mode = o.choice("mode", {"sync", "async_ps", "local_sgd"}, "sync");
  p.mode = mode == "sync"       ? workload::TrainingMode::kSync
           : mode == "async_ps" ? workload::TrainingMode::kAsyncPs
                                : workload::TrainingMode::kLocalSgd;
  if (o.has_non_null("ddp_bucket_size")) p.ddp_bucket_size = o.integer("ddp_bucket_size", 1, 1'000'000'000'000LL);
  // ZeRO (docs/strategies.md, "ZeRO and the distributed optimizer"). With
  // data_parallel_size 1 there is nothing to shard: any stage runs as stage 0.
  // DeepSpeed refuses ZeRO-2/3 with its pipeline engine (gradients and parameters
  // sharded across data-parallel ranks while micro-batches accumulate on stages).
  if (p.zero_stage >= 3 && p.expert > 1)
    o.fail_message("zero_stage", "zero_stage 3 with expert_model_parallel_size > 1 is not simulated; use zero_stage 1 "
                                 "or 2 (Megatron-LM's distributed optimizer shards expert states the same way)");
  if (p.zero_stage >= 2 && p.pipeline > 1)
    o.fail_message("zero_stage",
                   fmt::format("zero_stage {} shards gradients{} across data-parallel ranks, which DeepSpeed does "
                               "not support with pipeline parallelism (pipeline_model_parallel_size {}); use "
                               "zero_stage 1 (the distributed optimizer) or pipeline_model_parallel_size 1",
                               p.zero_stage, p.zero_stage == 3 ? " and parameters" : "", p.pipeline));
  if (p.overlap_param_gather && p.zero_stage == 0)
    o.fail_message("overlap_param_gather",
                   "overlap_param_gather overlaps the all-gather of sharded parameters with the forward pass; it "
                   "needs zero_stage 1, 2 or 3 (with zero_stage 0 every rank keeps all parameters)");
  p.staleness = static_cast<int>(o.integer("staleness", 0, 1'000'000, 0));
  p.num_servers = static_cast<int>(o.integer("num_servers", 1, kMaxParallel, 1));
  p.server_placement = o.choice("server_placement", {"colocated", "dedicated"}, "colocated") == "dedicated"
                           ? workload::ServerPlacement::kDedicated
                           : workload::ServerPlacement::kColocated;
  p.sync_period = static_cast<int>(o.integer("sync_period", 1, 1'000'000, 1));
  // The asynchronous modes replace the data-parallel gradient reduction; keys of
  // one mode given under another are a mistake worth naming.
  const auto only_with = [&](std::string_view key, workload::TrainingMode needed, std::string_view mode_name) {
    if (o.has(key) && p.mode != needed)
      o.fail_message(key, fmt::format("{} applies to \"mode\": \"{}\" only (mode is \"{}\")", key, mode_name,
                                      mode));
  };
  only_with("staleness", workload::TrainingMode::kAsyncPs, "async_ps");
  only_with("num_servers", workload::TrainingMode::kAsyncPs, "async_ps");
  only_with("server_placement", workload::TrainingMode::kAsyncPs, "async_ps");
  only_with("sync_period", workload::TrainingMode::kLocalSgd, "local_sgd");
  if (p.mode != workload::TrainingMode::kSync) {
    if (p.zero_stage > 0)
      o.fail_message("zero_stage", fmt::format("zero_stage {} shards states over a synchronous data-parallel group; "
                                               "mode \"{}\" has none (use zero_stage 0)",
                                               p.zero_stage, mode));
    if (p.context > 1 || p.expert > 1)
      o.fail_message("mode", fmt::format("mode \"{}\" runs data-parallel replicas without context or expert "
                                         "parallelism (context_parallel_size {}, expert_model_parallel_size {})",
                                         mode, p.context, p.expert));
  }
  if (p.mode == workload::TrainingMode::kAsyncPs && p.server_placement == workload::ServerPlacement::kColocated &&
      p.num_servers > gpus)
    o.fail_message("num_servers", fmt::format("{} co-located parameter servers on {} GPUs: at most one per GPU "
                                              "(or \"server_placement\": \"dedicated\")",
                                              p.num_servers, gpus));
}

}  // namespace

workload::ParallelConfig parse_parallelism(const ObjectReader& root, const hw::ClusterSpec& cluster,
                                           const workload::ModelConfig& model,
                                           const workload::TrainingConfig& training) {
  workload::ParallelConfig p;
  const nlohmann::json empty = nlohmann::json::object();
  const ObjectReader o =
      root.has("parallelism")
          ? root.object("parallelism",
                        {"tensor_model_parallel_size", "pipeline_model_parallel_size", "data_parallel_size",
                         "context_parallel_size", "expert_model_parallel_size",
                         "num_layers_per_virtual_pipeline_stage", "sequence_parallel", "zero_stage",
                         "recompute_granularity", "overlap_grad_reduce", "overlap_param_gather",
                         "pipeline_schedule", "mode", "ddp_bucket_size", "staleness", "num_servers", "server_placement",
                         "sync_period"},
                        {{"tp", "tensor_model_parallel_size"},
                         {"pp", "pipeline_model_parallel_size"},
                         {"dp", "data_parallel_size"},
                         {"cp", "context_parallel_size"},
                         {"ep", "expert_model_parallel_size"},
                         {"vpp", "num_layers_per_virtual_pipeline_stage"}})
          : ObjectReader(empty, root.file(), "/parallelism", {});
  const long long gpus = cluster.num_gpus();
  parse_sizes(root, o, gpus, model, training, p);
  parse_options_and_schedule(root, o, model, training, p);
  parse_mode(o, gpus, p);
  if (training.framework != workload::Framework::kFused) check_program_layout(root, o, model, training, p);
  return p;
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
