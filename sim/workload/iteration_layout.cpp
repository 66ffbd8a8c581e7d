#include "workload/iteration_layout.h"

#include <algorithm>
#include <stdexcept>

#include "workload/ddp.h"
#include "workload/memory.h"
#include "workload/pipeline_schedule.h"

namespace trainsim::workload {

IterationLayout iteration_layout(const ModelConfig& model, const TrainingConfig& training,
                                 const ParallelConfig& parallel, const hw::ClusterSpec& cluster) {
  IterationLayout l;
  l.tp = parallel.tensor;
  l.pp = parallel.pipeline;
  l.dp = parallel.data;
  l.cp = parallel.context;
  l.ep = parallel.expert;
  l.folded_experts = parallel.folded_experts();
  l.whole_context_group =
      parallel.context_comm != ContextComm::kP2p && parallel.context_comm != ContextComm::kTorchRing;
  if (parallel.folded_experts() && parallel.expert_tp() != 1)
    throw std::invalid_argument("expert_tensor_parallel_size must be tensor_model_parallel_size or 1");
  if (l.cp < 1 || l.ep < 1 || parallel.expert_carved_ranks() % l.ep != 0)
    throw std::invalid_argument("expert-parallel size must divide the data-parallel size");
  l.dense_dp = l.dp * l.cp;
  l.expert_dp = static_cast<int>(parallel.expert_data_parallel_size());
  // A mixed cluster's proportional shares need only whole micro-batches.
  if (!parallel.replica_microbatches && training.global_batch_size % (training.micro_batch_size * l.dp) != 0)
    throw std::invalid_argument("global batch not divisible by micro-batch x data-parallel size");
  l.ranks_per_stage = static_cast<long long>(l.tp) * l.cp * l.dp;
  if (l.ranks_per_stage * l.pp != cluster.num_gpus())
    throw std::invalid_argument("tp x cp x dp x pp is not the number of GPUs");
  if (parallel.rank_order == RankOrder::kTpPpDp) {
    if (l.cp > 1 || l.ep > 1) throw std::invalid_argument("rank order tp-pp-dp with context or expert parallelism");
    l.pp_stride = l.tp;
    l.dp_stride = static_cast<long long>(l.tp) * l.pp;
  } else {
    l.pp_stride = l.ranks_per_stage;
    l.dp_stride = static_cast<long long>(l.tp) * l.cp;
  }
  l.gpus_per_domain = cluster.gpus_per_domain();
  l.microbatches = static_cast<int>(microbatches_per_replica(training, parallel));

  l.chunks = model_chunks(model.num_layers, parallel);
  l.virtual_stages = l.pp * l.chunks;
  l.layers_per_virtual_stage = virtual_stage_layers(model.num_layers, parallel);
  l.first_layer.assign(static_cast<std::size_t>(l.virtual_stages), 0);
  for (std::size_t j = 1; j < l.first_layer.size(); ++j)
    l.first_layer[j] = l.first_layer[j - 1] + l.layers_per_virtual_stage[j - 1];

  l.shard_optimizer = parallel.zero_stage >= 1 && l.dense_dp > 1;
  l.zero3 = parallel.zero_stage >= 3 && l.dense_dp > 1;
  l.gather_buckets = l.shard_optimizer && !l.zero3;
  if (l.zero3 && l.pp > 1) throw std::invalid_argument("ZeRO-3 with pipeline parallelism is not supported");

  l.weight_bytes = state_bytes_per_parameter(training).weights;
  l.fp8_gather_bytes = fp8_weight_gather_bytes(training, l.weight_bytes);
  l.grad_bytes = hw::bytes_per_element(training.grad_reduce_dtype);
  l.bucket_limit = parallel.overlap_grad_reduce ? static_cast<double>(parallel.bucket_size_params()) : 1e300;
  l.first_bucket_limit = l.bucket_limit;
  l.ddp = under_ddp(training, parallel);
  l.fsdp2_eager = under_fsdp2(training, parallel);
  // FSDP2 without a MixedPrecisionPolicy gathers the eager program's fp32 parameters
  // as they are (autocast casts them after; docs/model.md, "PyTorch eager under FSDP2").
  if (l.fsdp2_eager) l.weight_bytes = 4.0;
  l.fsdp2 = l.fsdp2_eager || (l.zero3 && parallel.torch_fsdp2);
  if (l.ddp) {
    // PyTorch DDP's caps in bytes of fp32 gradient (workload/ddp.h); ddp_bucket_size
    // in parameters stands for bucket_cap_mb.
    l.bucket_limit = parallel.ddp_bucket_size ? static_cast<double>(*parallel.ddp_bucket_size)
                                              : kDdpBucketBytes / l.grad_bytes;
    l.first_bucket_limit = std::min(l.bucket_limit, kDdpFirstBucketBytes / l.grad_bytes);
  }
  // b s h per TP rank, b s h / t with sequence parallelism (Megatron-Core's
  // get_tensor_shapes) or Megatron-LM's legacy scatter-gather; under context
  // parallelism the rank's s / c tokens.
  const double split = parallel.sequence_parallel || parallel.scatter_gather_p2p ? l.tp : 1.0;
  l.p2p_bytes = static_cast<double>(training.micro_batch_size) * static_cast<double>(model.seq_length) *
                static_cast<double>(model.hidden_size) * activation_element_bytes(training) / split / l.cp;
  return l;
}

}  // namespace trainsim::workload
