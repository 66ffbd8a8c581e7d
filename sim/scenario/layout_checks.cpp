#include "scenario/layout_checks.h"

#include <array>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "scenario/errors.h"
#include "scenario/json_fields.h"
#include "workload/layout.h"
#include "workload/pipeline_schedule.h"

namespace trainsim::scenario {

using workload::ParallelConfig;

namespace {

// "framework": "pytorch_eager" and "trainsim_train" are single programs (docs/model.md,
// "PyTorch eager", "trainsim-train"): a GPT-2 block, and only the layouts they run.
// Anything else would need kernels their op lists do not have (DDP's bucket copies,
// gradient accumulation's adds, checkpointing, RMSNorm, rotary embeddings, ...).
void check_gpt2_block(const std::string& file, const workload::ModelConfig& model, std::string_view framework) {
  std::vector<std::string_view> unlike;
  if (model.is_moe()) unlike.emplace_back("num_experts > 1");
  if (model.swiglu) unlike.emplace_back("swiglu");
  if (model.normalization != workload::Normalization::kLayerNorm) unlike.emplace_back("normalization RMSNorm");
  if (model.position_embedding != workload::PositionEmbedding::kLearnedAbsolute)
    unlike.emplace_back("position_embedding_type rope");
  if (model.num_query_groups != model.num_attention_heads) unlike.emplace_back("num_query_groups != heads");
  if (model.hidden_dropout > 0.0 || model.attention_dropout > 0.0) unlike.emplace_back("dropout > 0");
  if (model.qk_layernorm) unlike.emplace_back("qk_layernorm");
  if (model.squared_relu) unlike.emplace_back("squared_relu");
  if (model.apply_layernorm_1p) unlike.emplace_back("apply_layernorm_1p");
  if (model.multi_latent_attention) unlike.emplace_back("multi_latent_attention");
  if (model.attention_window > 0) unlike.emplace_back("window_size");
  if (model.learnable_softmax_offset) unlike.emplace_back("softmax_type learnable");
  if (!unlike.empty())
    throw ScenarioError(file, "/model",
                        fmt::format("\"framework\": \"{}\" models a GPT-2 block (LayerNorm, GELU MLP, "
                                    "learned positions, multi-head attention, no dropout); this model has {}",
                                    framework, fmt::join(unlike, ", ")));
}

}  // namespace

LayoutChecks::LayoutChecks(std::string file, const hw::ClusterSpec& cluster, const workload::ModelConfig& model,
                           const workload::TrainingConfig& training, Fail fail)
    : file_(std::move(file)), cluster_(cluster), model_(model), training_(training), fail_(std::move(fail)) {}

void LayoutChecks::fail(std::string_view key, std::string message) const {
  fail_(key, std::move(message));
  throw std::logic_error("LayoutChecks: the fail function returned");
}

void LayoutChecks::model_parallel(const ParallelConfig& p) const {
  const long long gpus = cluster_.num_gpus();
  const long long mp = p.model_parallel_size();
  if (gpus % mp == 0) {
    domain_alignment(p);
    return;
  }
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
  fail(culprit, fmt::format("tensor ({}) x pipeline ({}) x context ({}) parallel = {} does not divide the {} GPUs",
                            p.tensor, p.pipeline, p.context, mp, gpus));
}

// Tensor- and context-parallel groups inside whole nodes of the network (docs/model.md,
// "Scale-up domains"): a TP group of 16 on 72-GPU NVL72 domains would straddle two.
void LayoutChecks::domain_alignment(const ParallelConfig& p) const {
  const int gpd = cluster_.gpus_per_domain();
  if (cluster_.num_gpus() <= gpd || workload::model_blocks_align(p.tensor, p.context, gpd)) return;
  const std::string unit = cluster_.nodes_per_domain == 1 ? fmt::format("{}-GPU nodes", gpd)
                                                          : fmt::format("{}-GPU scale-up domains", gpd);
  const bool tp_fits = workload::model_blocks_align(p.tensor, 1, gpd);
  fail(tp_fits ? "context_parallel_size" : "tensor_model_parallel_size",
       tp_fits ? fmt::format("context-parallel blocks of tensor ({}) x context ({}) = {} ranks straddle the {}: "
                             "one of the two must divide the other",
                             p.tensor, p.context, p.tensor * p.context, unit)
               : fmt::format("tensor-parallel groups of {} straddle the {}: one of the two must divide the other{}",
                             p.tensor, unit,
                             cluster_.nodes_per_domain == 1
                                 ? ""
                                 : " (Megatron-Bridge runs NVL72 racks as 64-GPU segments: cluster.scale_up_domain 64)"));
}

void LayoutChecks::data_fills_cluster(const ParallelConfig& p) const {
  const long long gpus = cluster_.num_gpus();
  const long long mp = p.model_parallel_size();
  if (p.data * mp != gpus)
    fail("data_parallel_size",
         fmt::format("tensor ({}) x pipeline ({}) x context ({}) x data ({}) parallel = {} but the cluster "
                     "has {} GPUs; use \"auto\" or a matching size",
                     p.tensor, p.pipeline, p.context, p.data, mp * p.data, gpus));
}

void LayoutChecks::sizes(const ParallelConfig& p) const {
  const workload::ModelConfig& model = model_;
  const workload::TrainingConfig& training = training_;
  if (p.batch_split == workload::BatchSplit::kProportional) {
    // A mixed cluster's replicas take shares of the micro-batches: at least one each.
    if (training.global_batch_size % training.micro_batch_size != 0 ||
        training.global_batch_size / training.micro_batch_size < p.data)
      throw ScenarioError(file_, "/training/global_batch_size",
                          fmt::format("with batch_split \"proportional\" global_batch_size ({}) must be a multiple "
                                      "of micro_batch_size ({}) with at least one micro-batch for each of the {} "
                                      "data-parallel replicas",
                                      training.global_batch_size, training.micro_batch_size, p.data));
  } else if (training.global_batch_size % (training.micro_batch_size * p.data) != 0) {
    throw ScenarioError(file_, "/training/global_batch_size",
                        fmt::format("global_batch_size ({}) must be divisible by micro_batch_size ({}) x "
                                    "data_parallel_size ({}) = {}",
                                    training.global_batch_size, training.micro_batch_size, p.data,
                                    training.micro_batch_size * p.data));
  }
  if (model.num_attention_heads % p.tensor != 0 || model.num_query_groups % p.tensor != 0)
    fail("tensor_model_parallel_size",
         fmt::format("tensor_model_parallel_size ({}) must divide num_attention_heads ({}) and "
                     "num_query_groups ({})",
                     p.tensor, model.num_attention_heads, model.num_query_groups));
  if (p.pipeline > model.num_layers)
    fail("pipeline_model_parallel_size",
         fmt::format("pipeline_model_parallel_size ({}) exceeds num_layers ({})", p.pipeline, model.num_layers));
  if (p.expert > 1 && (!model.is_moe() || model.num_experts % p.expert != 0))
    fail("expert_model_parallel_size",
         fmt::format("expert_model_parallel_size ({}) must divide num_experts ({})", p.expert, model.num_experts));
  if (p.expert_tp() != p.tensor && p.expert_tp() != 1)
    fail("expert_tensor_parallel_size",
         fmt::format("expert_tensor_parallel_size {} with tensor_model_parallel_size {} is not simulated: use "
                     "{} (the experts split like the dense layers) or 1 (the experts whole, the expert-parallel "
                     "group folded over the tensor ranks)",
                     p.expert_tp(), p.tensor, p.tensor));
  if (p.expert > 1 && p.folded_experts()) {
    // Megatron-Core's MoE parallel folding: the expert layers' ranks (tensor x
    // context x data of a stage) are grouped expert-tensor x expert x expert-data.
    const long long ranks = p.expert_carved_ranks();
    if (ranks % p.expert != 0)
      fail("expert_model_parallel_size",
           fmt::format("expert_model_parallel_size ({}) must divide tensor_model_parallel_size x "
                       "context_parallel_size x data_parallel_size = {} (expert_tensor_parallel_size 1 folds the "
                       "experts over those ranks)",
                       p.expert, ranks));
  } else if (p.expert > 1 && p.data % p.expert != 0) {
    // Megatron-LM: experts are carved out of the data-parallel ranks.
    fail("expert_model_parallel_size",
         fmt::format("expert_model_parallel_size ({}) must divide data_parallel_size ({}); with "
                     "expert_tensor_parallel_size 1 it may span the tensor ranks too (Megatron-Core's MoE "
                     "parallel folding)",
                     p.expert, p.data));
  }
  // Megatron-LM asserts sequence parallelism for MoE with tensor parallelism:
  // the token dispatcher works on the sequence-split tokens.
  if (model.is_moe() && p.tensor > 1 && !p.sequence_parallel)
    fail("sequence_parallel", fmt::format("a mixture-of-experts model with tensor_model_parallel_size {} needs "
                                          "\"sequence_parallel\": true (as Megatron-LM)",
                                          p.tensor));
  // Megatron-LM: "Tensor parallel communication/GEMM overlap can happen only when
  // sequence parallelism is enabled" (megatron/training/arguments.py).
  if (p.tp_overlap != workload::TpOverlap::kNone && (p.tensor < 2 || !p.sequence_parallel)) {
    const std::string key = p.tp_overlap == workload::TpOverlap::kUserbuffers ? "tp_comm_overlap"
                                                                             : "enable_async_tensor_parallel";
    fail(key, fmt::format("{} overlaps the sequence-parallel all-gathers and reduce-scatters with GEMMs: it needs "
                          "tensor_model_parallel_size > 1 (here {}) and \"sequence_parallel\": true (as {})",
                          key, p.tensor, p.tp_overlap == workload::TpOverlap::kUserbuffers ? "Megatron-LM" : "torchtitan"));
  }
  if (p.context > 1 && p.context_comm == workload::ContextComm::kAllToAll && (model.num_attention_heads / p.tensor) % p.context != 0)
    fail("cp_comm_type",
         fmt::format("cp_comm_type \"a2a\" splits the {} heads of each tensor-parallel rank over "
                     "context_parallel_size {}, which must divide them",
                     model.num_attention_heads / p.tensor, p.context));
  if (p.context > 1 && model.attention_window > 0)
    fail("context_parallel_size",
         fmt::format("context_parallel_size ({}) with a sliding window (window_size) is not modeled (the ring "
                     "would skip the blocks outside the window); use context_parallel_size 1",
                     p.context));
  if (p.context > 1 && model.multi_latent_attention)
    fail("context_parallel_size",
         fmt::format("context_parallel_size ({}) with multi_latent_attention is not modeled (the ring would pass "
                     "MLA's keys and values, which trainsim does not size yet); use context_parallel_size 1",
                     p.context));
  if (p.context > 1) {
    // Load-balanced ring attention splits each sequence into 2 x cp chunks.
    if (model.seq_length % (2LL * p.context) != 0)
      fail("context_parallel_size",
           fmt::format("context_parallel_size ({}) needs seq_length ({}) divisible by 2 x {} (the "
                       "load-balanced ring splits each sequence into 2 cp chunks)",
                       p.context, model.seq_length, p.context));
    if (!workload::is_flash(training.attention_backend))
      fail("context_parallel_size",
           "context parallelism runs ring attention on fused (flash) attention; set "
           "training.attention_backend to \"flash\" or \"flash2\"");
  }
}

void LayoutChecks::virtual_stage_range(const ParallelConfig& p) const {
  if (!p.layers_per_virtual_stage) return;
  const int v = *p.layers_per_virtual_stage;
  if (v < 1 || v > model_.num_layers)
    throw ScenarioError(file_, "/parallelism/num_layers_per_virtual_pipeline_stage",
                        integer_range(1, model_.num_layers), describe_found(nlohmann::json(v)));
}

void LayoutChecks::schedule(const ParallelConfig& p) const {
  // The split into (virtual) stages, as Megatron-Core builds it (workload/pipeline_schedule.h);
  // an impossible one names the key that makes it so.
  try {
    (void)workload::virtual_stage_layers(model_.num_layers, p);
  } catch (const workload::PipelineSplitError& e) {
    fail(e.key, e.what());
  }
  if (!p.has_virtual_stages()) {
    if (p.schedule == workload::PipelineSchedule::kInterleaved1F1B)
      fail("pipeline_schedule",
           "\"interleaved_1f1b\" needs virtual_pipeline_model_parallel_size or num_layers_per_virtual_pipeline_stage");
    return;
  }
  if (p.pipeline < 2)
    fail(p.virtual_stages_per_rank ? "virtual_pipeline_model_parallel_size" : "num_layers_per_virtual_pipeline_stage",
         "virtual pipeline stages need pipeline_model_parallel_size >= 2");
  const long long microbatches = workload::microbatches_per_replica(training_, p);
  if (microbatches % p.pipeline != 0)
    throw ScenarioError(file_, "/training/global_batch_size",
                        fmt::format("the interleaved schedule needs the micro-batches per replica ({}) to be a "
                                    "multiple of pipeline_model_parallel_size ({})",
                                    microbatches, p.pipeline));
}

void LayoutChecks::recompute(const ParallelConfig& p) const {
  if (p.recompute != workload::Recompute::kSelectiveOp) return;
  // workload/op_sac.h lists a block's aten.mm calls for dense, fused-attention
  // blocks with separate Q, K, V projections (torchtitan's Llama).
  const char* what = model_.is_moe()                        ? "a MoE model"
                     : model_.multi_latent_attention        ? "multi-head latent attention"
                     : !workload::is_flash(training_.attention_backend) ? "unfused attention"
                                                            : nullptr;
  if (what != nullptr)
    fail("recompute_granularity",
         fmt::format("\"selective_op\" (torchtitan's op-level policy) is modeled for dense blocks with fused "
                     "attention, not {}",
                     what));
}

// DeepSpeed's ZeRO-Offload as trainsim models it (docs/model.md, "CPU optimizer offload").
void LayoutChecks::zero_offload(const ParallelConfig& p) const {
  const auto refuse = [&](std::string_view key, const std::string& why) {
    fail(key, "offload_optimizer \"cpu\" (DeepSpeed's ZeRO-Offload) " + why);
  };
  if ((p.zero_stage != 1 && p.zero_stage != 2) || p.mode != workload::TrainingMode::kSync)
    refuse("zero_stage", fmt::format("is modeled with ZeRO stage 1 or 2 in mode \"sync\" (found zero_stage {})",
                                     p.zero_stage));
  if (training_.optimizer_offload_fraction > 0.0)
    refuse("offload_optimizer", "and Megatron-Core's training.optimizer_cpu_offload are two frameworks' forms of one "
                                "offload: give one");
  if (training_.optimizer != workload::Optimizer::kAdam)
    refuse("offload_optimizer", "runs DeepSpeedCPUAdam: training.optimizer \"adam\" or \"adamw\"");
  if (workload::microbatches_per_replica(training_, p) != 1)
    refuse("offload_optimizer",
           fmt::format("with gradient accumulation ({} micro-batches per replica) copies every micro-step's "
                       "gradients to the host and back, which is not modeled yet: make global_batch_size = "
                       "micro_batch_size x data_parallel_size",
                       workload::microbatches_per_replica(training_, p)));
  if (!cluster_.host.link_known() || !(cluster_.host.cpu_adam_rate > 0.0))
    refuse("offload_optimizer", "needs the GPU's host link and the host CPUs' Adam rate: cluster.host.device_to_host, "
                                "host_to_device and cpu_adam_rate (trainsim-cpu-adam measures it)");
}

void LayoutChecks::offload(const ParallelConfig& p) const {
  if (training_.optimizer_offload_fraction > 0.0) {
    // Megatron-Core: --optimizer-cpu-offload needs --use-precision-aware-optimizer,
    // which needs the distributed optimizer (d98e8a6, arguments.py, optimizer/__init__.py).
    if (p.zero_stage != 1 || p.mode != workload::TrainingMode::kSync)
      fail("zero_stage", fmt::format("training.optimizer_cpu_offload is Megatron-Core's, over its distributed "
                                     "optimizer: zero_stage 1 in mode \"sync\" (found zero_stage {})",
                                     p.zero_stage));
  }
  if (p.offload_optimizer) zero_offload(p);
  if (p.offloaded_layers == 0) return;
  // Megatron-Core's TransformerConfig refuses the combinations below (d98e8a6,
  // transformer_config.py); the offload context comes from Transformer Engine.
  const auto refuse = [&](std::string_view key, std::string_view what) {
    fail(key, fmt::format("cpu_offloading is not supported with {} (Megatron-Core's TransformerConfig refuses it)",
                          what));
  };
  if (p.pipeline > 1) refuse("pipeline_model_parallel_size", "pipeline parallelism");
  if (p.recompute != workload::Recompute::kNone) refuse("recompute_granularity", "activation recomputation");
  if (training_.framework != workload::Framework::kFused)
    refuse("cpu_offloading", "a program other than Megatron-Core's (\"framework\": \"fused\"): it is Transformer "
                             "Engine's offload context");
  if (!cluster_.host.link_known())
    fail("cpu_offloading", "cpu_offloading copies activations to host memory and back: it needs the GPU's host link, "
                           "cluster.host.device_to_host and host_to_device (the GPU's preset has no platform.host)");
}

void LayoutChecks::zero(const ParallelConfig& p) const {
  // ZeRO (docs/strategies.md, "ZeRO and the distributed optimizer"). With
  // data_parallel_size 1 there is nothing to shard: any stage runs as stage 0.
  // DeepSpeed refuses ZeRO-2/3 with its pipeline engine (gradients and parameters
  // sharded across data-parallel ranks while micro-batches accumulate on stages).
  if (p.zero_stage >= 2 && p.pipeline > 1)
    fail("zero_stage",
         fmt::format("zero_stage {} shards gradients{} across data-parallel ranks, which DeepSpeed does "
                     "not support with pipeline parallelism (pipeline_model_parallel_size {}); use "
                     "zero_stage 1 (the distributed optimizer) or pipeline_model_parallel_size 1. PyTorch "
                     "FSDP2 under torch.distributed.pipelining (torchtitan's FSDP + PP) is zero_stage 1: "
                     "its stages keep parameters gathered through the step (reshard_after_forward=False) and "
                     "reduce-scatter gradients once, on the last micro-batch (set_requires_gradient_sync)",
                     p.zero_stage, p.zero_stage == 3 ? " and parameters" : "", p.pipeline));
  if (p.overlap_param_gather && p.zero_stage == 0)
    fail("overlap_param_gather",
         "overlap_param_gather overlaps the all-gather of sharded parameters with the forward pass; it "
         "needs zero_stage 1, 2 or 3 (with zero_stage 0 every rank keeps all parameters)");
  // Megatron-LM: "--fp8-param-gather only supported with distributed optimizer, torch
  // fsdp2, megatron fsdp" (arguments.py); FSDP's fp8 gathers are not modeled yet.
  if (workload::quantized_param_gather(training_) && p.zero_stage != 1 && p.zero_stage != 2) {
    const std::string key = training_.fp4_param_gather ? "fp4_param_gather" : "fp8_param_gather";
    fail("zero_stage", fmt::format("training.{} is modeled over Megatron-LM's distributed optimizer, "
                                   "zero_stage 1 or 2 (found {}){}",
                                   key, p.zero_stage,
                                   p.zero_stage == 3 ? fmt::format("; FSDP's quantized all-gathers (Megatron-FSDP, "
                                                                   "torchao's enable_fsdp_float8_all_gather) are not "
                                                                   "modeled yet: remove {} for 16-bit gathers",
                                                                   key)
                                                     : std::string()));
  }
}

void LayoutChecks::asynchronous(const ParallelConfig& p, std::string_view mode) const {
  if (p.mode != workload::TrainingMode::kSync) {
    if (p.zero_stage > 0)
      fail("zero_stage", fmt::format("zero_stage {} shards states over a synchronous data-parallel group; "
                                     "mode \"{}\" has none (use zero_stage 0)",
                                     p.zero_stage, mode));
    if (p.context > 1 || p.expert > 1)
      fail("mode", fmt::format("mode \"{}\" runs data-parallel replicas without context or expert "
                               "parallelism (context_parallel_size {}, expert_model_parallel_size {})",
                               mode, p.context, p.expert));
  }
  if (p.mode == workload::TrainingMode::kAsyncPs && p.server_placement == workload::ServerPlacement::kColocated &&
      p.num_servers > cluster_.num_gpus())
    fail("num_servers", fmt::format("{} co-located parameter servers on {} GPUs: at most one per GPU "
                                    "(or \"server_placement\": \"dedicated\")",
                                    p.num_servers, cluster_.num_gpus()));
  if (p.mode == workload::TrainingMode::kAsyncPs && p.server_placement == workload::ServerPlacement::kDedicated &&
      cluster_.nodes_per_domain > 1)
    fail("server_placement", fmt::format("dedicated parameter servers are nodes of their own outside the GPUs' "
                                         "scale-up domains, which span {} nodes here: co-locate them "
                                         "(\"server_placement\": \"colocated\") or give cluster.scale_up_domain "
                                         "equal to gpus_per_node",
                                         cluster_.nodes_per_domain));
}

// The layouts the two single-program op lists model (docs/model.md, "PyTorch eager",
// "trainsim-train"): no model parallelism, recomputation or asynchronous mode;
// trainsim-train runs synchronous data-parallel replicas with gradient accumulation,
// the PyTorch eager program one GPU, DDP replicas or FSDP2 sharding, one optimizer
// step per micro-batch.
void LayoutChecks::program(const ParallelConfig& p) const {
  const workload::TrainingConfig& training = training_;
  const bool eager = training.framework == workload::Framework::kPytorchEager;
  const std::string_view name = eager ? "pytorch_eager" : "trainsim_train";
  const std::string_view models =
      eager ? "one GPU, data-parallel replicas under PyTorch DDP, or FSDP2 sharding its blocks over them, without "
              "model parallelism or checkpointing"
            : "data-parallel replicas without model parallelism, sharding or recomputation";
  const auto parallel = [&](std::string_view key, bool ok, std::string_view what) {
    if (!ok)
      fail(key, fmt::format("\"framework\": \"{}\" models {}; {} is not modeled with it", name, models, what));
  };
  parallel("tensor_model_parallel_size", p.tensor == 1, "tensor parallelism");
  parallel("pipeline_model_parallel_size", p.pipeline == 1, "pipeline parallelism");
  parallel("context_parallel_size", p.context == 1, "context parallelism");
  parallel("expert_model_parallel_size", p.expert == 1, "expert parallelism");
  if (eager && p.zero_stage != 0 && p.zero_stage != 3)
    fail("zero_stage",
         fmt::format("\"framework\": \"pytorch_eager\" models one GPU, data-parallel replicas under PyTorch DDP "
                     "(zero_stage 0) or FSDP2's fully_shard on each block and the model (zero_stage 3); ZeRO stage {} "
                     "(DDP with ZeroRedundancyOptimizer, or FSDP2 with reshard_after_forward false) is not modeled "
                     "with it: use zero_stage 0 or 3",
                     p.zero_stage));
  parallel("zero_stage", eager || p.zero_stage == 0, "ZeRO");
  if (eager && p.data > 1 && !p.overlap_grad_reduce)
    fail("overlap_grad_reduce",
         p.zero_stage == 3 ? "\"framework\": \"pytorch_eager\" with zero_stage 3 runs PyTorch FSDP2, which "
                             "reduce-scatters each block's gradients as soon as its backward ends: set "
                             "overlap_grad_reduce true"
                           : "\"framework\": \"pytorch_eager\" with data parallelism runs PyTorch DDP, which "
                             "all-reduces each gradient bucket as soon as its gradients are ready: set "
                             "overlap_grad_reduce true");
  if (eager && p.data > 1 && p.zero_stage == 3 && !p.overlap_param_gather)
    fail("overlap_param_gather", "\"framework\": \"pytorch_eager\" with zero_stage 3 runs PyTorch FSDP2, whose "
                                 "blocks' all-gathers run ahead of their compute (issued as the host reaches them in "
                                 "the forward, prefetched one block ahead in the backward): set overlap_param_gather "
                                 "true");
  parallel("recompute_granularity", p.recompute == workload::Recompute::kNone, "activation recomputation");
  parallel("mode", p.mode == workload::TrainingMode::kSync, "an asynchronous mode");
  if (eager && training.global_batch_size != training.micro_batch_size * p.data)
    throw ScenarioError(file_, "/training/global_batch_size",
                        fmt::format("\"framework\": \"pytorch_eager\" models one optimizer step per micro-batch; "
                                    "global_batch_size ({}) must equal micro_batch_size ({}) x data_parallel_size "
                                    "({}) (gradient accumulation is not modeled with it)",
                                    training.global_batch_size, training.micro_batch_size, p.data));
  check_gpt2_block(file_, model_, name);
}

workload::ParallelConfig check_parallelism(workload::ParallelConfig p, bool schedule_given,
                                           const config::Scenario& base) {
  const std::string& file = base.source_file;
  const LayoutChecks check(file, base.cluster, base.model, base.training, [&](std::string_view key, std::string m) {
    throw ScenarioError(file, "/parallelism/" + json_pointer_escape(key), std::move(m));
  });
  check.model_parallel(p);
  check.data_fills_cluster(p);
  check.sizes(p);
  check.virtual_stage_range(p);
  if (p.has_virtual_stages()) {
    if (schedule_given && p.schedule != workload::PipelineSchedule::kInterleaved1F1B)
      check.fail("pipeline_schedule", "virtual pipeline stages need \"interleaved_1f1b\"");
    p.schedule = workload::PipelineSchedule::kInterleaved1F1B;
  }
  check.schedule(p);
  check.offload(p);
  check.zero(p);
  check.asynchronous(p, p.mode == workload::TrainingMode::kSync      ? "sync"
                        : p.mode == workload::TrainingMode::kAsyncPs ? "async_ps"
                                                                     : "local_sgd");
  if (base.training.framework != workload::Framework::kFused) check.program(p);
  return p;
}

}  // namespace trainsim::scenario
