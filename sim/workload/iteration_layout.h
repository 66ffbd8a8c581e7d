#pragma once
// The sizes, layer split and switches an iteration graph is built from, derived
// and checked once (docs/model.md, "Iteration"; docs/strategies.md). The
// builder's emitters (pipeline_passes, gradient_buckets, zero3_passes,
// async_traffic) read them from here rather than each deriving its own.
#include <cstddef>
#include <vector>

#include "hardware/cluster.h"
#include "workload/model_config.h"
#include "workload/parallel_config.h"
#include "workload/training_config.h"

namespace trainsim::workload {

struct IterationLayout {
  int tp = 1;
  int pp = 1;
  int dp = 1;
  int cp = 1;
  int ep = 1;
  // Weights are replicated over the data- and context-parallel ranks, expert
  // weights over the dp x cp / ep ranks holding the same experts (Megatron-LM).
  int dense_dp = 1;
  int expert_dp = 1;
  // expert_tensor_parallel_size 1 with tp > 1 (Megatron-Core's MoE parallel
  // folding): a stage's tp x cp x dp ranks in order tp-cp-dp are grouped
  // ep x expert_dp, the expert-parallel peers adjacent; experts are not split.
  bool folded_experts = false;
  bool whole_context_group = false;  // cp_comm_type "a2a" or "all_gather": the context group is whole, not ring pairs
  // A stage's ranks, tp x cp x dp, each known by its index k in the order
  // tp-cp-dp (k = i + tp (c + cp x) for TP index i, context index c, data index x).
  long long ranks_per_stage = 1;
  // Where they are (ParallelConfig::rank_order): rank = s pp_stride + (k mod tp cp)
  // + (k div tp cp) dp_stride. tp-cp-ep-dp-pp: pp_stride tp cp dp, dp_stride tp cp
  // (stage s holds [s tp cp dp, (s+1) tp cp dp)); tp-pp-dp: pp_stride tp, dp_stride tp pp.
  long long pp_stride = 1;
  long long dp_stride = 1;
  int gpus_per_domain = 1;  // GPUs one intra-node fabric joins (the network's node)
  int microbatches = 1;  // per replica and iteration
  int chunks = 1;        // model chunks per stage (interleaved schedule)
  int virtual_stages = 1;
  // Decoder layers of virtual stage j (stage s, chunk c at j = c pp + s) and its first one.
  std::vector<long long> layers_per_virtual_stage;
  std::vector<long long> first_layer;

  // ZeRO (docs/strategies.md, "ZeRO and the distributed optimizer"): with one
  // data-parallel rank there is nothing to shard and every stage runs as stage 0.
  bool shard_optimizer = false;  // ZeRO >= 1
  bool zero3 = false;
  bool gather_buckets = false;  // ZeRO-1/2, Megatron's distributed optimizer: gathers by bucket

  double weight_bytes = 0.0;  // bytes of one weight element
  // Bytes of one fp8 GEMM's weight element in a parameter all-gather
  // (fp8_weight_gather_bytes).
  double fp8_gather_bytes = 0.0;
  double grad_bytes = 0.0;    // bytes of one reduced gradient element
  // Gradient bucket size in parameters (no limit: one bucket per stage), and the
  // first bucket's (PyTorch DDP's smaller first bucket; else the same).
  double bucket_limit = 0.0;
  double first_bucket_limit = 0.0;
  // The PyTorch eager program under DDP (workload/ddp.h).
  bool ddp = false;
  // The PyTorch eager program sharded by FSDP2 (zero3_passes' fsdp2_eager_units).
  bool fsdp2_eager = false;
  // ZeRO-3 as PyTorch FSDP2 (the eager program's, or use_torch_fsdp2): its copy-out
  // after each gather and chunk_cat before each reduce-scatter (zero3_passes).
  bool fsdp2 = false;
  // Activations and their gradients between stages, per transfer.
  double p2p_bytes = 0.0;

  // Model chunk `chunk` of pipeline stage `stage`: virtual stage j = chunk pp + stage
  // and its decoder layers [first, end).
  struct VirtualStage {
    int index = 0;
    long long first = 0;
    long long end = 0;
  };
  [[nodiscard]] VirtualStage virtual_stage(int stage, int chunk) const {
    const int j = chunk * pp + stage;
    const long long first = first_layer[static_cast<std::size_t>(j)];
    return {j, first, first + layers_per_virtual_stage[static_cast<std::size_t>(j)]};
  }
  // The rank of stage s with in-stage index k (above).
  [[nodiscard]] long long rank(int s, long long k) const {
    const long long block = static_cast<long long>(tp) * cp;
    return static_cast<long long>(s) * pp_stride + k % block + k / block * dp_stride;
  }
  // Stage s's simulated rank, the one that stands for all of its ranks.
  [[nodiscard]] long long rank_of_stage(int s) const { return rank(s, 0); }
  [[nodiscard]] int stage_of_rank(long long r) const { return static_cast<int>(r / pp_stride % pp); }
  [[nodiscard]] int last_virtual() const { return virtual_stages - 1; }
  // Index of (micro-batch, virtual stage) in per-pass tables.
  [[nodiscard]] std::size_t slot(int microbatch, int virtual_stage) const {
    return static_cast<std::size_t>(microbatch) * static_cast<std::size_t>(virtual_stages) +
           static_cast<std::size_t>(virtual_stage);
  }
  [[nodiscard]] std::size_t slots() const {
    return static_cast<std::size_t>(microbatches) * static_cast<std::size_t>(virtual_stages);
  }
};

// Throws std::invalid_argument for a layout the graph cannot be built for.
IterationLayout iteration_layout(const ModelConfig& model, const TrainingConfig& training,
                                 const ParallelConfig& parallel, const hw::ClusterSpec& cluster);

}  // namespace trainsim::workload
