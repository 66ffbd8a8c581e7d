#pragma once
#include <cstdint>
// The parallel layout and its options (scenario "parallelism"), Megatron-LM names.
#include <algorithm>
#include <optional>
#include <vector>

#include "workload/training_config.h"

namespace trainsim::workload {

// kSelectiveOp: torchtitan's selective op activation checkpointing (workload/op_sac.h).
enum class Recompute { kNone, kSelective, kFull, kSelectiveOp };
enum class PipelineSchedule { kGpipe, k1F1B, kInterleaved1F1B };
enum class TrainingMode { kSync, kAsyncPs, kLocalSgd };
// How ranks are numbered (Megatron-LM's `order` of initialize_model_parallel):
// tp-cp-ep-dp-pp, the default (a stage's ranks are contiguous), or tp-pp-dp
// (--use-tp-pp-dp-mapping: the stages of one data-parallel replica are
// contiguous; Megatron-LM allows it without context or expert parallelism).
enum class RankOrder { kTpCpEpDpPp, kTpPpDp };
// Where async_ps parameter servers run: on the workers' nodes (server j beside
// GPU j x GPUs / S, using its NIC) or on S nodes of their own added to the cluster.
enum class ServerPlacement { kColocated, kDedicated };

// How context-parallel attention exchanges its tensors (Megatron-Core's
// cp_comm_type, through Transformer Engine): "p2p" passes K and V around a ring;
// "a2a" (DeepSpeed-Ulysses) exchanges Q, K, V and the output by all-to-all so
// that each context rank attends over the whole sequence for 1/cp of the heads;
// "all_gather" gathers K and V from the whole group before attending (Llama 3).
// kTorchRing: PyTorch's ring attention (torchtitan's context_parallel_rotate_method),
// the ring's transfers with PyTorch's concatenations, fp32 merges and fp32 gradients.
enum class ContextComm : std::uint8_t { kP2p, kAllToAll, kAllGather, kTorchRing };

// Tensor-parallel communication overlapped with the GEMMs next to it (docs/model.md,
// "Tensor-parallel communication overlap"): Megatron-Core's tp_comm_overlap through
// Transformer Engine's userbuffers, or torchtitan's enable_async_tensor_parallel
// through PyTorch's symmetric memory (fused_all_gather_matmul,
// fused_matmul_reduce_scatter).
enum class TpOverlap : std::uint8_t { kNone, kUserbuffers, kSymmetricMemory };

// A mixed cluster's pipeline split (docs/strategies.md, "Mixed clusters"): kSpeed
// gives each stage decoder layers in proportion to its GPUs' speed (the split that
// makes the slowest stage fastest, workload/heterogeneous.h); kEven keeps trainsim's
// even split. Only a mixed cluster without a split of the user's reads it.
enum class PipelineBalance : std::uint8_t { kSpeed, kEven };
// How a mixed cluster's data-parallel replicas share the global batch: kEven, the
// same micro-batches each (the faster ones wait at the gradient reduction);
// kProportional, micro-batches in proportion to each replica's speed (docs/strategies.md).
enum class BatchSplit : std::uint8_t { kEven, kProportional };

struct ParallelConfig {
  int tensor = 1;    // tensor_model_parallel_size
  int pipeline = 1;  // pipeline_model_parallel_size
  int data = 1;      // data_parallel_size (resolved from "auto")
  int context = 1;   // context_parallel_size
  int expert = 1;    // expert_model_parallel_size
  // expert_tensor_parallel_size: the experts' own tensor parallelism (Megatron-Core's
  // MoE parallel folding); 0: tensor. 1 with tensor > 1 folds the expert-parallel
  // group over the tensor x context x data ranks (docs/strategies.md).
  int expert_tensor = 0;
  std::optional<int> layers_per_virtual_stage;
  // The pipeline split as Megatron-Core builds it (get_num_layers_to_build;
  // docs/strategies.md, "Uneven pipeline stages"): model chunks per stage
  // (virtual_pipeline_model_parallel_size), the layers of the first and last stage
  // (decoder_first/last_pipeline_num_layers), and the embedding and the loss each
  // counted as a layer of the split (account_for_embedding/loss_in_pipeline_split).
  std::optional<int> virtual_stages_per_rank;
  std::optional<int> first_stage_layers;
  std::optional<int> last_stage_layers;
  bool embedding_in_split = false;
  bool loss_in_split = false;
  // Megatron-Core's pipeline_model_parallel_layout, read: the decoder layers of each
  // virtual stage in model order (v = chunk x pp + stage), the embedding on the first
  // and the loss on the last; empty: none given.
  std::vector<long long> layout_stage_layers;
  bool sequence_parallel = false;
  // Megatron-LM's legacy scatter_gather_tensors_in_pipeline: without sequence
  // parallelism each TP rank sends its 1/t slice of a stage's output (Megatron-Core
  // sends it whole; docs/model.md, "Pipeline parallelism").
  bool scatter_gather_p2p = false;
  // The sequence-parallel collectives beside the GEMMs (TpOverlap); needs tensor > 1
  // and sequence_parallel.
  TpOverlap tp_overlap = TpOverlap::kNone;
  // Megatron-Core's cp_comm_type (ContextComm).
  ContextComm context_comm = ContextComm::kP2p;
  RankOrder rank_order = RankOrder::kTpCpEpDpPp;
  PipelineBalance pipeline_balance = PipelineBalance::kSpeed;
  bool balanced_by_speed = false;  // resolved: layout_stage_layers is the speed-balanced split
  BatchSplit batch_split = BatchSplit::kEven;
  // Resolved on a mixed cluster (scenario/mixed_cluster.h): the pool each stage of the
  // simulated replica runs on (each stage's slowest; with kProportional the pacing
  // replica's), and with kProportional that replica's micro-batches.
  std::optional<long long> replica_microbatches;
  std::vector<int> replica_stage_pools;
  int zero_stage = 0;
  Recompute recompute = Recompute::kNone;
  // Megatron-Core's cpu_offloading with cpu_offloading_num_layers (Transformer
  // Engine's CPU offload): the activations of the first N decoder layers go to
  // host memory in the forward pass and come back for the backward (docs/model.md,
  // "CPU activation offload"); 0: off.
  int offloaded_layers = 0;
  // DeepSpeed's ZeRO-Offload (zero_optimization.offload_optimizer.device "cpu"):
  // the rank's optimizer partition lives in host memory and DeepSpeedCPUAdam
  // updates it (docs/model.md, "CPU optimizer offload").
  bool offload_optimizer = false;
  bool overlap_grad_reduce = false;  // Megatron-LM's default
  bool overlap_param_gather = false;
  // Megatron-LM's use_torch_fsdp2 (--use-torch-fsdp2): ZeRO-3 as PyTorch FSDP2's
  // fully_shard (torchtitan, NeMo AutoModel, the pytorch_eager program): each gather's
  // copy-out into the unsharded parameters and each reduce-scatter's chunk_cat into its
  // input run on the compute stream (docs/model.md, "ZeRO-3 and FSDP").
  bool torch_fsdp2 = false;
  // Megatron-Core's moe_shared_expert_overlap: the shared experts' linears beside the
  // dispatch and combine all-to-alls, on a stream of their own.
  bool shared_expert_overlap = false;
  // Megatron-Core's overlap_moe_expert_parallel_comm: one micro-batch's expert
  // all-to-alls beside another's compute (combined 1F1B); pipeline size 1.
  bool expert_a2a_overlap = false;
  PipelineSchedule schedule = PipelineSchedule::k1F1B;
  TrainingMode mode = TrainingMode::kSync;
  int num_servers = 1;   // async_ps: parameter servers, each holding 1/S of the parameters
  int staleness = 0;     // async_ps: steps a worker may run ahead of the slowest (0: pull before each step)
  ServerPlacement server_placement = ServerPlacement::kColocated;
  int sync_period = 1;   // local_sgd: steps between two averagings of the parameters
  // Parameters per gradient bucket; Megatron-LM's default is max(4e7, 1e6 * dp)
  // (megatron/core/distributed/distributed_data_parallel_config.py).
  std::optional<long long> ddp_bucket_size;

  // Model chunks per stage are set (the interleaved schedule).
  [[nodiscard]] bool has_virtual_stages() const {
    return layers_per_virtual_stage || virtual_stages_per_rank ||
           layout_stage_layers.size() > static_cast<std::size_t>(pipeline);
  }
  // A split other than trainsim's even one: any of the keys above but the chunks.
  [[nodiscard]] bool custom_split() const {
    return first_stage_layers || last_stage_layers || embedding_in_split || loss_in_split ||
           !layout_stage_layers.empty();
  }
  [[nodiscard]] int expert_tp() const { return expert_tensor > 0 ? expert_tensor : tensor; }
  // Experts folded over the tensor ranks (expert_tensor_parallel_size 1 < tensor).
  [[nodiscard]] bool folded_experts() const { return expert > 1 && expert_tp() != tensor; }
  // The ranks the expert-parallel groups are carved from, which ep must divide:
  // the data-parallel ones (Megatron-LM), or folded tp x cp x dp.
  [[nodiscard]] long long expert_carved_ranks() const {
    return folded_experts() ? static_cast<long long>(tensor) * context * data : data;
  }
  // The ranks holding the same experts: dp x cp / ep, or folded tp x cp x dp / ep.
  [[nodiscard]] long long expert_data_parallel_size() const {
    return (folded_experts() ? expert_carved_ranks() : static_cast<long long>(data) * context) / expert;
  }
  [[nodiscard]] long long model_parallel_size() const {
    return static_cast<long long>(tensor) * pipeline * context;
  }
  [[nodiscard]] long long bucket_size_params() const {
    return ddp_bucket_size.value_or(std::max(40'000'000LL, 1'000'000LL * data));
  }
};

// Micro-batches each data-parallel replica runs per iteration: GBS / (MBS x DP). The
// scenario reader checks that it divides (docs/scenario.md, "training").
// A mixed cluster's proportional split: the pacing replica's share instead.
[[nodiscard]] inline long long microbatches_per_replica(const TrainingConfig& t, const ParallelConfig& p) {
  if (p.replica_microbatches) return *p.replica_microbatches;
  return t.global_batch_size / (t.micro_batch_size * p.data);
}

// The same job with `count` micro-batches per replica (the short runs the steady
// state is extrapolated from): the global batch, or the pacing replica's share.
inline void set_microbatches_per_replica(TrainingConfig& t, ParallelConfig& p, long long count) {
  if (p.replica_microbatches) p.replica_microbatches = count;
  else t.global_batch_size = count * t.micro_batch_size * p.data;
}

}  // namespace trainsim::workload
