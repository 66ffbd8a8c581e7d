// Parses "parallelism": reads each key (types, ranges, "auto", aliases, keys that
// belong to another mode) and runs the layout checks (layout_checks.h) as soon as
// it has what each needs, so an error names the key as the user wrote it.
#include <cctype>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "scenario/errors.h"
#include "scenario/layout_checks.h"
#include "scenario/parse_sections.h"
#include "scenario/unmodeled_keys.h"
#include "workload/deepspeed_partition.h"
#include "workload/pipeline_schedule.h"

namespace trainsim::scenario {

namespace {

constexpr long long kMaxParallel = 1'000'000;

// Megatron-LM's rank order: "rank_order" (its `order` string) or its switch
// --use-tp-pp-dp-mapping; tp-pp-dp refuses context and expert parallelism as
// Megatron-LM does ("Make sure EP and CP aren't used with this option enabled").
void parse_rank_order(const ObjectReader& o, workload::ParallelConfig& p) {
  const bool mapping = o.boolean("use_tp_pp_dp_mapping", false);
  const std::string order =
      o.choice("rank_order", {"tp-cp-ep-dp-pp", "tp-pp-dp"}, mapping ? "tp-pp-dp" : "tp-cp-ep-dp-pp");
  if (mapping && order != "tp-pp-dp")
    o.fail_message("rank_order", fmt::format("rank_order \"{}\" contradicts use_tp_pp_dp_mapping true (which means "
                                             "\"tp-pp-dp\"); give one of the two",
                                             order));
  if (order != "tp-pp-dp") return;
  p.rank_order = workload::RankOrder::kTpPpDp;
  if (p.context > 1 || p.expert > 1)
    o.fail_message(mapping ? "use_tp_pp_dp_mapping" : "rank_order",
                   fmt::format("rank order tp-pp-dp (Megatron-LM's --use-tp-pp-dp-mapping) is defined without context "
                               "and expert parallelism (context_parallel_size {}, expert_model_parallel_size {}); use "
                               "\"tp-cp-ep-dp-pp\"",
                               p.context, p.expert));
}

// The parallel sizes, data parallelism resolved from "auto".
void parse_sizes(const ObjectReader& o, const LayoutChecks& check, long long gpus, workload::ParallelConfig& p) {
  p.tensor = static_cast<int>(o.integer("tensor_model_parallel_size", 1, kMaxParallel, 1));
  p.pipeline = static_cast<int>(o.integer("pipeline_model_parallel_size", 1, kMaxParallel, 1));
  p.context = static_cast<int>(o.integer("context_parallel_size", 1, kMaxParallel, 1));
  p.expert = static_cast<int>(o.integer("expert_model_parallel_size", 1, kMaxParallel, 1));
  p.expert_tensor = static_cast<int>(o.integer("expert_tensor_parallel_size", 1, kMaxParallel, p.tensor));
  check.model_parallel(p);
  const long long mp = p.model_parallel_size();
  if (o.has_non_null("data_parallel_size") && o.raw("data_parallel_size").is_string()) {
    if (o.raw("data_parallel_size") != "auto")
      o.fail("data_parallel_size", "an integer or \"auto\"", o.raw("data_parallel_size"));
    p.data = static_cast<int>(gpus / mp);
  } else {
    p.data = static_cast<int>(o.integer("data_parallel_size", 1, kMaxParallel, gpus / mp));
    check.data_fills_cluster(p);
  }
  p.sequence_parallel = o.boolean("sequence_parallel", false);
  p.scatter_gather_p2p = o.boolean("scatter_gather_tensors_in_pipeline", false);
  const bool userbuffers = o.boolean("tp_comm_overlap", false);
  const bool symmetric_memory = o.boolean("enable_async_tensor_parallel", false);
  if (userbuffers && symmetric_memory)
    o.fail_message("enable_async_tensor_parallel",
                   "tp_comm_overlap (Megatron-Core, Transformer Engine's userbuffers) and "
                   "enable_async_tensor_parallel (torchtitan, PyTorch's symmetric memory) are two frameworks' "
                   "forms of one overlap: give one");
  p.tp_overlap = userbuffers        ? workload::TpOverlap::kUserbuffers
                 : symmetric_memory ? workload::TpOverlap::kSymmetricMemory
                                    : workload::TpOverlap::kNone;
  const std::string cp_comm = o.choice("cp_comm_type", {"p2p", "a2a", "all_gather", "a2a+p2p"}, "p2p");
  if (cp_comm == "a2a+p2p")
    o.fail_message("cp_comm_type", "cp_comm_type \"a2a+p2p\" (hierarchical: all-to-all inside, a ring across) is not "
                                   "modeled; \"p2p\" (the ring), \"a2a\" (Ulysses all-to-all) and \"all_gather\" "
                                   "(K and V gathered) are");
  p.context_comm = cp_comm == "a2a"          ? workload::ContextComm::kAllToAll
                   : cp_comm == "all_gather" ? workload::ContextComm::kAllGather
                                             : workload::ContextComm::kP2p;
  // torchtitan's context_parallel_rotate_method: PyTorch's ring attention. Its
  // "allgather" gathers K and V once where "alltoall" passes them around the ring; both
  // move (c - 1) chunks to each rank and run the same blocks, priced as the ring.
  if (o.has_non_null("context_parallel_rotate_method")) {
    (void)o.choice("context_parallel_rotate_method", {"allgather", "alltoall"}, "allgather");
    if (o.has_non_null("cp_comm_type"))
      o.fail_message("context_parallel_rotate_method",
                     "context_parallel_rotate_method (torchtitan, PyTorch's ring attention) and cp_comm_type "
                     "(Megatron-Core, Transformer Engine) are two frameworks' context parallelism: give one");
    p.context_comm = workload::ContextComm::kTorchRing;
  }
  check.sizes(p);
  parse_rank_order(o, p);
}

// Megatron-Core's pipeline_model_parallel_layout (PipelineParallelLayerLayout's
// string form): stages separated by '|', 'E' the embedding, 't' a decoder layer, 'L'
// the loss, "(...)*n" and "x*n" repeated, commas ignored. Returns the decoder layers
// of each stage; the embedding must open the first stage and the loss close the last.
std::vector<long long> parse_pipeline_layout(const ObjectReader& o) {
  const std::string key = "pipeline_model_parallel_layout";
  std::string text;
  for (const char c : o.text(key))
    if (c != ',' && c != ' ') text += c;
  const auto repeat = [&](std::string& s, bool group) {
    std::string out;
    for (std::size_t i = 0; i < s.size();) {
      std::size_t body_begin = i, body_end = i + 1, after = i + 1;
      if (group) {
        if (s[i] != '(') {
          out += s[i++];
          continue;
        }
        const std::size_t close = s.find(')', i);
        if (close == std::string::npos) o.fail_message(key, key + ": a '(' without its ')'");
        body_begin = i + 1;
        body_end = close;
        after = close + 1;
      }
      std::size_t digits = after + 1;
      while (digits < s.size() && std::isdigit(static_cast<unsigned char>(s[digits])) != 0) ++digits;
      if (after >= s.size() || s[after] != '*' || digits == after + 1) {
        if (group) o.fail_message(key, key + ": a group \"(...)\" must be followed by *n");
        out += s[i++];
        continue;
      }
      const long long n = std::stoll(s.substr(after + 1, digits - after - 1));
      if (n < 1 || n > 100'000) o.fail_message(key, key + ": a repeat count must be from 1 to 100000");
      for (long long k = 0; k < n; ++k) out += s.substr(body_begin, body_end - body_begin);
      i = digits;
    }
    s = out;
  };
  repeat(text, true);
  repeat(text, false);
  std::vector<long long> stages(1, 0);
  int embeddings = 0, losses = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '|') {
      stages.push_back(0);
    } else if (c == 't') {
      ++stages.back();
    } else if (c == 'E') {
      if (i != 0) o.fail_message(key, key + ": the embedding 'E' must open the first stage, and only there");
      ++embeddings;
    } else if (c == 'L') {
      if (i + 1 != text.size()) o.fail_message(key, key + ": the loss 'L' must close the last stage, and only there");
      ++losses;
    } else if (c == 'm') {
      o.fail_message(key, key + ": multi-token prediction layers ('m') are not modeled");
    } else {
      o.fail_message(key, fmt::format("{}: '{}' is not a layer (E embedding, t decoder layer, L loss, | between "
                                      "stages)", key, c));
    }
  }
  if (embeddings != 1 || losses != 1)
    o.fail_message(key, key + ": the layout needs the embedding 'E' first and the loss 'L' last");
  return stages;
}

// DeepSpeed's partition_method (workload/deepspeed_partition.h): the decoder layers
// per stage, as pipeline_model_parallel_layout would give them.
void parse_partition_method(const ObjectReader& o, const workload::ModelConfig& model, workload::ParallelConfig& p) {
  const std::string key = "partition_method";
  if (p.custom_split() || p.has_virtual_stages())
    o.fail_message(key, "DeepSpeed's partition_method places every layer itself: give it without "
                        "pipeline_model_parallel_layout, decoder_first/last_pipeline_num_layers, "
                        "account_for_embedding/loss_in_pipeline_split and the virtual-stage keys");
  try {
    p.layout_stage_layers = workload::deepspeed_stage_layers(model, p.tensor, p.pipeline, o.text(key));
  } catch (const std::invalid_argument& e) {
    o.fail_message(key, key + " " + e.what());
  }
}

// Megatron-Core's CPU activation offload (TransformerConfig.cpu_offloading and
// cpu_offloading_num_layers; docs/model.md, "CPU activation offload").
void parse_cpu_offloading(const ObjectReader& o, const workload::ModelConfig& model, workload::ParallelConfig& p) {
  const bool on = o.boolean("cpu_offloading", false);
  const long long layers = o.integer("cpu_offloading_num_layers", 0, std::max(0LL, model.num_layers - 1), 0);
  // Transformer Engine ignores both (weights are never offloaded; its reloads no
  // longer take double buffers): read for their type only.
  (void)o.boolean("cpu_offloading_weights", false);
  (void)o.boolean("cpu_offloading_double_buffering", false);
  if (!on) {
    if (layers > 0)
      o.fail_message("cpu_offloading_num_layers",
                     "cpu_offloading_num_layers is given without \"cpu_offloading\": true; Megatron-LM's command "
                     "line turns offloading on with it, Megatron-Bridge and NeMo do not (their recipes set "
                     "cpu_offloading beside it): set cpu_offloading to say which");
    return;
  }
  if (layers == 0)
    o.fail_message("cpu_offloading", "\"cpu_offloading\": true needs cpu_offloading_num_layers >= 1: Transformer "
                                     "Engine offloads the activations of the first N decoder layers");
  if (!o.boolean("cpu_offloading_activations", true))
    o.fail_message("cpu_offloading_activations",
                   "cpu_offloading_activations false offloads nothing Transformer Engine still offloads (it "
                   "ignores cpu_offloading_weights): remove cpu_offloading");
  p.offloaded_layers = static_cast<int>(layers);
}

// Virtual stages, ZeRO, recomputation, overlaps and the pipeline schedule.
// Megatron-Core's --moe-shared-expert-overlap (docs/model.md, "Shared experts beside
// the all-to-alls").
void parse_shared_expert_overlap(const ObjectReader& o, const workload::ModelConfig& model,
                                 workload::ParallelConfig& p) {
  const std::string key = "moe_shared_expert_overlap";
  p.shared_expert_overlap = o.boolean(key, false);
  if (!p.shared_expert_overlap) return;
  if (!model.has_shared_expert())
    o.fail_message(key, key + " runs a MoE model's shared experts beside the token all-to-alls; this model has "
                              "none (set model.moe_shared_expert_intermediate_size, or remove it)");
  if (p.tp_overlap != workload::TpOverlap::kNone)
    o.fail_message(key, key + " with tp_comm_overlap or enable_async_tensor_parallel is not modeled yet (Megatron-Core "
                              "then runs the shared experts' linears without userbuffers); remove one of them");
}

// Megatron-Core's --overlap-moe-expert-parallel-comm (docs/model.md, "All-to-alls
// beside another micro-batch"), with the asserts of TransformerConfig.__post_init__.
void parse_expert_a2a_overlap(const ObjectReader& o, const workload::ModelConfig& model,
                              const workload::TrainingConfig& training, workload::ParallelConfig& p) {
  const std::string key = "overlap_moe_expert_parallel_comm";
  p.expert_a2a_overlap = o.boolean(key, false);
  if (!p.expert_a2a_overlap) return;
  const auto refuse = [&](bool bad, std::string_view why) {
    if (bad) o.fail_message(key, fmt::format("{} {}", key, why));
  };
  refuse(p.expert <= 1, "overlaps expert-parallel all-to-alls: it needs expert_model_parallel_size > 1");
  refuse(p.pipeline > 1 && workload::model_chunks(model.num_layers, p) < 2,
         fmt::format("with pipeline_model_parallel_size {} runs inside Megatron-Core's interleaved schedule, which "
                     "needs virtual stages (TransformerConfig asserts virtual_pipeline_model_parallel_size): give "
                     "virtual_pipeline_model_parallel_size >= 2 or num_layers_per_virtual_pipeline_stage",
                     p.pipeline));
  refuse(p.recompute == workload::Recompute::kFull || p.recompute == workload::Recompute::kSelectiveOp,
         "needs recompute_granularity \"none\" or \"selective\" (Megatron-Core refuses full recomputation with "
         "it)");
  refuse(p.zero_stage == 3, "with zero_stage 3 (FSDP) is not modeled yet: use zero_stage 0-2, or remove it");
  refuse(p.shared_expert_overlap, "and moe_shared_expert_overlap exclude each other in Megatron-Core: give one");
  refuse(p.offloaded_layers > 0, "with cpu_offloading is not modeled yet: give one");
  refuse(training.precision == hw::Precision::kFp32 || training.precision == hw::Precision::kTf32,
         "runs a bf16 or fp16 model (Megatron-Core), and fp8 recipes over one; precision is fp32 or tf32");
}

void parse_options_and_schedule(const ObjectReader& o, const LayoutChecks& check, const workload::ModelConfig& model,
                                workload::ParallelConfig& p) {
  if (o.has_non_null("num_layers_per_virtual_pipeline_stage"))
    p.layers_per_virtual_stage =
        static_cast<int>(o.integer("num_layers_per_virtual_pipeline_stage", 1, model.num_layers));
  // The pipeline split's Megatron-LM keys (docs/strategies.md, "Uneven pipeline stages").
  if (o.has_non_null("virtual_pipeline_model_parallel_size"))
    p.virtual_stages_per_rank =
        static_cast<int>(o.integer("virtual_pipeline_model_parallel_size", 1, model.num_layers + 2));
  if (o.has_non_null("decoder_first_pipeline_num_layers"))
    p.first_stage_layers = static_cast<int>(o.integer("decoder_first_pipeline_num_layers", 0, model.num_layers));
  if (o.has_non_null("decoder_last_pipeline_num_layers"))
    p.last_stage_layers = static_cast<int>(o.integer("decoder_last_pipeline_num_layers", 0, model.num_layers));
  p.embedding_in_split = o.boolean("account_for_embedding_in_pipeline_split", false);
  p.loss_in_split = o.boolean("account_for_loss_in_pipeline_split", false);
  if (o.has_non_null("pipeline_model_parallel_layout")) p.layout_stage_layers = parse_pipeline_layout(o);
  if (o.has_non_null("partition_method")) parse_partition_method(o, model, p);
  p.pipeline_balance = o.choice("pipeline_balance", {"speed", "even"}, "speed") == "even"
                           ? workload::PipelineBalance::kEven
                           : workload::PipelineBalance::kSpeed;
  p.zero_stage = static_cast<int>(o.integer("zero_stage", 0, 3, 0));
  const std::string recompute =
      o.has("recompute_granularity") && o.raw("recompute_granularity").is_null()
          ? "none"
          : o.choice("recompute_granularity", {"none", "selective", "full", "selective_op"}, "none");
  p.recompute = recompute == "full"           ? workload::Recompute::kFull
                : recompute == "selective"    ? workload::Recompute::kSelective
                : recompute == "selective_op" ? workload::Recompute::kSelectiveOp
                                              : workload::Recompute::kNone;
  check.recompute(p);
  parse_cpu_offloading(o, model, p);
  // DeepSpeed's zero_optimization.offload_optimizer.device.
  const std::string device = o.choice("offload_optimizer", {"none", "cpu", "nvme"}, "none");
  if (device == "nvme")
    o.fail_message("offload_optimizer", "offload_optimizer \"nvme\" (ZeRO-Infinity: the optimizer states on NVMe "
                                        "drives) is not modeled yet; \"cpu\" keeps them in host memory");
  p.offload_optimizer = device == "cpu";
  p.overlap_grad_reduce = o.boolean("overlap_grad_reduce", false);
  p.overlap_param_gather = o.boolean("overlap_param_gather", false);
  parse_shared_expert_overlap(o, model, p);
  const std::string schedule = o.choice("pipeline_schedule", {"gpipe", "1f1b", "interleaved_1f1b"}, "1f1b");
  p.schedule = schedule == "gpipe"  ? workload::PipelineSchedule::kGpipe
               : schedule == "1f1b" ? workload::PipelineSchedule::k1F1B
                                    : workload::PipelineSchedule::kInterleaved1F1B;
  // Megatron-LM runs the interleaved schedule whenever virtual stages are set.
  if (p.has_virtual_stages()) {
    if (o.has("pipeline_schedule") && p.schedule != workload::PipelineSchedule::kInterleaved1F1B)
      o.fail_message("pipeline_schedule", fmt::format("{} needs \"interleaved_1f1b\"",
                                                      p.virtual_stages_per_rank ? "virtual_pipeline_model_parallel_size"
                                                      : !p.layout_stage_layers.empty() ? "pipeline_model_parallel_layout"
                                                                                : "num_layers_per_virtual_pipeline_stage"));
    p.schedule = workload::PipelineSchedule::kInterleaved1F1B;
  }
  check.schedule(p);
}

// use_torch_fsdp2: ZeRO-3 as PyTorch FSDP2 (the pytorch_eager program's zero_stage 3 is).
void parse_torch_fsdp2(const ObjectReader& o, const workload::TrainingConfig& training, workload::ParallelConfig& p) {
  const bool eager = training.framework == workload::Framework::kPytorchEager;
  p.torch_fsdp2 = o.boolean("use_torch_fsdp2", eager && p.zero_stage == 3);
  if (!o.has_non_null("use_torch_fsdp2")) return;
  if (p.torch_fsdp2 && p.zero_stage != 3)
    o.fail_message("use_torch_fsdp2", fmt::format("use_torch_fsdp2 is PyTorch FSDP2's fully_shard, which shards "
                                                  "parameters, gradients and optimizer states: it needs zero_stage 3 "
                                                  "(found {})",
                                                  p.zero_stage));
  if (!p.torch_fsdp2 && eager && p.zero_stage == 3)
    o.fail_message("use_torch_fsdp2", "\"framework\": \"pytorch_eager\" with zero_stage 3 runs PyTorch FSDP2 "
                                      "(fully_shard on each block and the model); remove use_torch_fsdp2 false");
}

// The training mode and its keys.
void parse_mode(const ObjectReader& o, const LayoutChecks& check, workload::ParallelConfig& p) {
  const std::string mode = o.choice("mode", {"sync", "async_ps", "local_sgd"}, "sync");
  p.mode = mode == "sync"       ? workload::TrainingMode::kSync
           : mode == "async_ps" ? workload::TrainingMode::kAsyncPs
                                : workload::TrainingMode::kLocalSgd;
  if (o.has_non_null("ddp_bucket_size")) p.ddp_bucket_size = o.integer("ddp_bucket_size", 1, 1'000'000'000'000LL);
  check.zero(p);
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
  check.asynchronous(p, mode);
}

}  // namespace

workload::ParallelConfig parse_parallelism(const ObjectReader& root, const hw::ClusterSpec& cluster,
                                           const workload::ModelConfig& model,
                                           const workload::TrainingConfig& training) {
  workload::ParallelConfig p;
  const nlohmann::json empty = nlohmann::json::object();
  // The section's keys, and the recipe switches it refuses as not modeled yet.
  const std::vector<std::string_view> known = with_unmodeled(
      {"tensor_model_parallel_size", "pipeline_model_parallel_size", "data_parallel_size", "context_parallel_size",
       "expert_model_parallel_size", "expert_tensor_parallel_size", "num_layers_per_virtual_pipeline_stage",
       "virtual_pipeline_model_parallel_size", "decoder_first_pipeline_num_layers", "decoder_last_pipeline_num_layers",
       "account_for_embedding_in_pipeline_split", "account_for_loss_in_pipeline_split",
       "pipeline_model_parallel_layout", "partition_method", "pipeline_balance", "batch_split", "cp_comm_type", "context_parallel_rotate_method", "rank_order", "use_tp_pp_dp_mapping",
       "sequence_parallel", "scatter_gather_tensors_in_pipeline", "tp_comm_overlap", "enable_async_tensor_parallel", "zero_stage", "recompute_granularity", "cpu_offloading", "cpu_offloading_num_layers",
       "cpu_offloading_activations", "cpu_offloading_weights", "cpu_offloading_double_buffering", "offload_optimizer",
       "overlap_grad_reduce", "overlap_param_gather", "use_torch_fsdp2", "moe_shared_expert_overlap",
       "overlap_moe_expert_parallel_comm", "pipeline_schedule", "mode", "ddp_bucket_size", "staleness", "num_servers", "server_placement", "sync_period"},
      unmodeled_parallelism_keys());
  const ObjectReader o =
      root.has("parallelism")
          ? root.object("parallelism", known,
                        {{"tp", "tensor_model_parallel_size"},
                         {"pp", "pipeline_model_parallel_size"},
                         {"dp", "data_parallel_size"},
                         {"cp", "context_parallel_size"},
                         {"ep", "expert_model_parallel_size"},
                         {"etp", "expert_tensor_parallel_size"},
                         {"vpp", "num_layers_per_virtual_pipeline_stage"},
                         {"num_virtual_stages_per_pipeline_rank", "virtual_pipeline_model_parallel_size"},
                         {"num_layers_in_first_pipeline_stage", "decoder_first_pipeline_num_layers"},
                         {"num_layers_in_last_pipeline_stage", "decoder_last_pipeline_num_layers"},
                         {"pp_partition_method", "partition_method"}})
          : ObjectReader(empty, root.file(), "/parallelism", {});
  refuse_unmodeled(o, unmodeled_parallelism_keys());
  const LayoutChecks check(root.file(), cluster, model, training,
                           [&o](std::string_view key, std::string message) { o.fail_message(key, std::move(message)); });
  if (o.choice("batch_split", {"even", "proportional"}, "even") == "proportional") {
    if (!cluster.heterogeneous())
      o.fail_message("batch_split", "batch_split \"proportional\" shares the batch among data-parallel replicas of "
                                    "different speeds: it needs a mixed cluster (cluster.pools); replicas alike "
                                    "take equal shares");
    p.batch_split = workload::BatchSplit::kProportional;
  }
  parse_sizes(o, check, cluster.num_gpus(), p);
  parse_options_and_schedule(o, check, model, p);
  parse_torch_fsdp2(o, training, p);
  parse_mode(o, check, p);
  parse_expert_a2a_overlap(o, model, training, p);
  check.offload(p);
  if (training.framework != workload::Framework::kFused) check.program(p);
  return p;
}

}  // namespace trainsim::scenario
