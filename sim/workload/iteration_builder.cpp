#include "workload/iteration_builder.h"

#include <stdexcept>
#include <string>

#include "workload/layout.h"
#include "workload/parameters.h"
#include "workload/transformer_ops.h"

namespace trainsim::workload {

namespace {

// Appends compute tasks for ops on rank 0's compute stream; returns the ids.
struct ComputeAppender {
  TaskGraph& graph;
  int iteration;
  int microbatch;

  std::vector<TaskId> add(const std::vector<Op>& ops, Category category) const {
    std::vector<TaskId> ids;
    ids.reserve(ops.size());
    for (const Op& op : ops) {
      Task t;
      t.name = op.name;
      t.stream = Stream::kCompute;
      t.category = category;
      t.compute = op.work;
      t.iteration = iteration;
      t.microbatch = microbatch;
      t.layer = op.layer;
      t.model_flops = op.model_flops;
      ids.push_back(graph.add(std::move(t)));
    }
    return ids;
  }
};

struct GradientBucket {
  double params = 0.0;
  TaskId ready_after = 0;  // the backward task that completes its last gradient
};

}  // namespace

IterationGraph build_iteration_graph(const ModelConfig& model, const TrainingConfig& training,
                                     const ParallelConfig& parallel, const hw::ClusterSpec& cluster, int iterations) {
  if (parallel.tensor != 1 || parallel.pipeline != 1 || parallel.context != 1 || parallel.expert != 1)
    throw std::invalid_argument("only data parallelism is simulated so far");
  if (iterations < 1) throw std::invalid_argument("iterations must be at least 1");
  const long long replicas_batch = training.micro_batch_size * parallel.data;
  if (training.global_batch_size % replicas_batch != 0)
    throw std::invalid_argument("global batch not divisible by micro-batch x data-parallel size");

  IterationGraph out;
  out.iterations = iterations;
  out.num_microbatches = training.global_batch_size / replicas_batch;
  out.num_gpus = cluster.num_gpus();
  out.tokens_per_iteration = training.global_batch_size * model.seq_length;
  out.simulated_ranks = {0};
  out.representative.assign(static_cast<std::size_t>(out.num_gpus), 0);

  const TransformerOps ops(model, training, training.micro_batch_size);
  const double params = count_parameters(model).total;
  out.parameters_per_gpu = params;
  out.model_flops_per_iteration =
      ops.model_flops_per_microbatch() * static_cast<double>(out.num_microbatches) * parallel.data;

  // Rank order tp-cp-ep-dp-pp: data-parallel peers are tp x cp ranks apart.
  const net::CommGroup dp_group =
      group_shape(parallel.data, static_cast<long long>(parallel.tensor) * parallel.context, cluster.gpus_per_node);
  const double grad_bytes = hw::bytes_per_element(training.grad_reduce_dtype);
  // Megatron-LM: one bucket for the whole model unless gradients are reduced
  // while the backward pass runs.
  const double bucket_limit =
      parallel.overlap_grad_reduce ? static_cast<double>(parallel.bucket_size_params()) : params * 2.0 + 1.0;
  const auto m = static_cast<int>(out.num_microbatches);
  TaskGraph& g = out.graph;

  for (int it = 0; it < iterations; ++it) {
    std::vector<GradientBucket> buckets;
    GradientBucket open;
    TaskId last_backward = 0;
    for (int mb = 0; mb < m; ++mb) {
      const ComputeAppender add{g, it, mb};
      add.add(ops.embedding_forward(), Category::kForward);
      for (long long l = 0; l < model.num_layers; ++l) add.add(ops.layer_forward(l), Category::kForward);
      add.add(ops.head_forward(), Category::kForward);

      const bool last = mb == m - 1;
      auto backward = [&](const std::vector<Op>& bops) {
        const std::vector<TaskId> ids = add.add(bops, Category::kBackward);
        for (std::size_t i = 0; i < bops.size(); ++i) {
          last_backward = ids[i];
          if (!last || bops[i].grad_params <= 0.0) continue;
          open.params += bops[i].grad_params;
          open.ready_after = ids[i];
          if (open.params >= bucket_limit) {
            buckets.push_back(open);
            open = {};
          }
        }
      };
      backward(ops.head_backward());
      for (long long l = model.num_layers - 1; l >= 0; --l) {
        add.add(ops.layer_recompute(l, parallel.recompute), Category::kRecompute);
        backward(ops.layer_backward(l));
      }
      backward(ops.embedding_backward());
    }
    if (open.params > 0.0) buckets.push_back(open);

    std::vector<TaskId> reductions;
    if (parallel.data > 1) {
      for (std::size_t i = 0; i < buckets.size(); ++i) {
        Task t;
        t.name = "grad_all_reduce.bucket" + std::to_string(i);
        t.stream = Stream::kDpComm;
        t.category = Category::kAllReduce;
        t.collective = net::Collective{net::CollectiveKind::kAllReduce, buckets[i].params * grad_bytes, dp_group};
        t.deps = {parallel.overlap_grad_reduce ? buckets[i].ready_after : last_backward};
        t.iteration = it;
        reductions.push_back(g.add(std::move(t)));
      }
    }
    out.gradient_buckets = parallel.data > 1 ? static_cast<int>(buckets.size()) : 0;

    Task step;
    const Op op = ops.optimizer_step(params);
    step.name = op.name;
    step.stream = Stream::kCompute;
    step.category = Category::kOptimizer;
    step.compute = op.work;
    step.deps = reductions;
    step.iteration = it;
    g.add(std::move(step));
  }
  return out;
}

}  // namespace trainsim::workload
