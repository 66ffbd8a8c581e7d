#include "workload/iteration_builder.h"

#include <algorithm>
#include <optional>
#include <stdexcept>

#include "workload/async_traffic.h"
#include "workload/ddp.h"
#include "workload/gradient_buckets.h"
#include "workload/host_optimizer.h"
#include "workload/iteration_layout.h"
#include "workload/memory.h"
#include "workload/pipeline_passes.h"
#include "workload/stage_groups.h"
#include "workload/stage_iteration.h"
#include "workload/transformer_ops.h"
#include "workload/zero3_passes.h"

namespace trainsim::workload {

IterationWork iteration_work(const ModelConfig& model, const TrainingConfig& training, const ParallelConfig& parallel) {
  // Every replica's micro-batches: GBS / MBS in all (a mixed cluster's replicas may
  // run different shares of them, ParallelConfig::replica_microbatches).
  const TransformerOps whole(model, training, training.micro_batch_size);
  const double flops =
      parallel.replica_microbatches
          ? whole.model_flops_per_microbatch() *
                static_cast<double>(training.global_batch_size / training.micro_batch_size)
          : whole.model_flops_per_microbatch() * static_cast<double>(microbatches_per_replica(training, parallel)) *
                parallel.data;
  return {training.global_batch_size * model.seq_length, flops};
}

namespace {

// Room for every task, so that building moves none: every op of every pass and
// the transfers for each micro-batch; gradient buckets and their gathers number
// at most two per backward op of one micro-batch; ZeRO-3 adds a gather per unit
// and pass and a reduce-scatter per unit.
std::size_t task_bound(const IterationLayout& l, const ModelConfig& model, const ParallelConfig& parallel,
                       CachedOps& ops, int iterations) {
  const std::size_t per_layer = ops.layer_forward(0).size() + ops.layer_backward(0).size() +
                                ops.layer_recompute(0, parallel.recompute).size() + (l.zero3 ? 3 : 0);
  const std::size_t per_microbatch = static_cast<std::size_t>(model.num_layers) * per_layer +
                                     ops.embedding_forward().size() + ops.embedding_backward().size() +
                                     ops.head_forward().size() + ops.head_backward().size() +
                                     2 * static_cast<std::size_t>(l.virtual_stages) + (l.zero3 ? 6 : 0);
  return static_cast<std::size_t>(iterations) * (static_cast<std::size_t>(l.microbatches) + 2) *
         (per_microbatch + 2 * static_cast<std::size_t>(parallel.offloaded_layers));
}

// The stage's gradient reductions (or async_ps traffic), its optimizer step and
// what the next iteration waits for, once its passes are in.
class StageEnd {
 public:
  StageEnd(IterationGraph& out, const AsyncTraffic& async, const TrainingConfig& training)
      : out_(out), async_(async), training_(training) {}

  void add(StageIteration& stage) {
    const IterationLayout& l = stage.in.layout;
    const ParallelConfig& parallel = stage.in.parallel;
    std::vector<GradientBucket> buckets = stage.grads.finish();
    // Expert weights held by one rank alone need no reduction.
    if (l.expert_dp <= 1) std::erase_if(buckets, [](const GradientBucket& b) { return b.expert; });
    const TaskId last_backward = stage.emit.last();
    double stage_params = l.zero3 ? stage.zero3_params : stage.grads.params();
    const double expert_params = l.zero3 ? stage.zero3_expert_params : stage.grads.expert_params();

    std::vector<TaskId> reduced;  // per bucket
    if (parallel.mode == TrainingMode::kAsyncPs) {
      async_.add_push_pull(stage, buckets, last_backward, stage_params);
    } else if (parallel.mode == TrainingMode::kSync && l.dense_dp > 1 && !l.zero3) {
      reduced = add_gradient_reductions(stage.in.graph, buckets, l, parallel.overlap_grad_reduce, stage.groups,
                                        last_backward, stage.rank, stage.iteration);
      stage.reductions.insert(stage.reductions.end(), reduced.begin(), reduced.end());
    }
    if (stage.stage == 0) out_.gradient_buckets = bucket_count(stage, buckets);
    out_.parameters_per_gpu = std::max(out_.parameters_per_gpu, stage_params);
    if (parallel.mode == TrainingMode::kAsyncPs) return;  // the servers update the parameters

    TaskDeps copied;  // ZeRO-Offload: the gradient partitions copied to the host
    if (parallel.offload_optimizer)
      copied = add_partition_copies(stage, buckets, reduced, last_backward, shard_of(l, stage_params, expert_params));
    // PyTorch DDP: every bucket copied back into .grad once all are reduced.
    const TaskId before_step = l.ddp ? add_ddp_copy_back(stage, last_backward, stage_params) : last_backward;
    const TaskId step = add_optimizer_step(stage, before_step, stage_params, expert_params, copied);
    stage.carry.previous_step = step;
    async_.add_average(stage, step, stage_params);
    if (l.gather_buckets && !parallel.overlap_param_gather) {
      const std::vector<TaskId> ids =
          add_gathers_after_step(stage.in.graph, buckets, l, stage.groups, step, stage.rank, stage.iteration);
      stage.carry.pending_gathers.insert(stage.carry.pending_gathers.end(), ids.begin(), ids.end());
    }
  }

 private:
  // ZeRO-3 reduces per unit and micro-batch: its buckets are the first micro-batch's.
  static int bucket_count(const StageIteration& stage, const std::vector<GradientBucket>& buckets) {
    const IterationLayout& l = stage.in.layout;
    if (l.dense_dp <= 1) return 0;
    if (!l.zero3) return static_cast<int>(buckets.size());
    const TaskGraph& g = stage.in.graph;
    return static_cast<int>(
        std::count_if(stage.reductions.begin(), stage.reductions.end(), [&](TaskId r) { return g[r].microbatch == 0; }));
  }

  // ZeRO: each rank updates its shard of the parameters: 1/(dp cp) of the dense
  // ones, 1/(dp cp / ep) of the expert ones.
  static double shard_of(const IterationLayout& l, double params, double expert_params) {
    return l.shard_optimizer ? (params - expert_params) / static_cast<double>(l.dense_dp) +
                                   expert_params / static_cast<double>(l.expert_dp)
                             : params;
  }

  // A compute task of `op` on the stage rank's compute stream after its last backward
  // and its gradient reductions.
  static Task after_reductions(StageIteration& stage, const Op& op, TaskId last_backward, Category category,
                               Role role) {
    Work w;
    w.name = op.name;
    w.compute = op.work;
    Task t;
    t.work = stage.in.graph.add_work(std::move(w));
    t.rank = stage.rank;
    t.stream = Stream::kCompute;
    t.category = category;
    t.role = role;
    t.deps = stage.reductions;
    t.deps.push_back(last_backward);
    t.iteration = stage.iteration;
    return t;
  }

  // finalize_backward's copies (workload/ddp.h), once every bucket's all-reduce is done.
  static TaskId add_ddp_copy_back(StageIteration& stage, TaskId last_backward, double params) {
    return stage.in.graph.add(
        after_reductions(stage, ddp_copy_buckets_to_grads(params), last_backward, Category::kBackward, Role::kLayer));
  }

  // With CPU optimizer offload the host updates the offloaded share first
  // (workload/host_optimizer.h) and the GPU the rest.
  TaskId add_optimizer_step(StageIteration& stage, TaskId last_backward, double params, double expert_params,
                            const TaskDeps& copied) const {
    const IterationLayout& l = stage.in.layout;
    const double shard = shard_of(l, params, expert_params);
    const double offloaded = stage.in.parallel.offload_optimizer ? 1.0 : training_.optimizer_offload_fraction;
    OptimizerScope scope;
    scope.shard = shard * (1.0 - offloaded);
    scope.local = l.zero3 ? 0.0 : params;
    scope.prescale = !l.zero3 && l.dense_dp > 1;
    scope.fsdp = l.zero3;
    Task t = after_reductions(stage, stage.in.ops.optimizer_step(scope), last_backward, Category::kOptimizer,
                              Role::kOptimizerStep);
    if (offloaded > 0.0) add_host_update(stage, training_, offloaded * shard, copied, t.deps);
    return stage.in.graph.add(std::move(t));
  }

  IterationGraph& out_;
  const AsyncTraffic& async_;
  const TrainingConfig& training_;
};

}  // namespace

IterationGraph build_iteration_graph(const ModelConfig& model, const TrainingConfig& training,
                                     const ParallelConfig& parallel, const hw::ClusterSpec& cluster, int iterations) {
  if (iterations < 1) throw std::invalid_argument("iterations must be at least 1");
  const IterationLayout layout = iteration_layout(model, training, parallel, cluster);
  IterationGraph out;
  out.iterations = iterations;
  out.num_microbatches = layout.microbatches;
  out.num_gpus = cluster.num_gpus();
  // Stage s's first rank stands for every rank of the stage (DESIGN.md, "Scale").
  out.representative.resize(static_cast<std::size_t>(out.num_gpus));
  for (long long r = 0; r < out.num_gpus; ++r)
    out.representative[static_cast<std::size_t>(r)] =
        static_cast<int>(layout.rank_of_stage(layout.stage_of_rank(r)));
  for (int s = 0; s < layout.pp; ++s) out.simulated_ranks.push_back(static_cast<int>(layout.rank_of_stage(s)));
  out.layers_per_virtual_stage = layout.layers_per_virtual_stage;
  const IterationWork work = iteration_work(model, training, parallel);
  out.tokens_per_iteration = work.tokens;
  out.model_flops_per_iteration = work.model_flops;

  const TransformerOps layer_ops(model, training, training.micro_batch_size, layout.tp, parallel.sequence_parallel,
                                 layout.cp, layout.ep, layout.folded_experts, parallel.context_comm,
                                 parallel.tp_overlap, layout.zero3, parallel.shared_expert_overlap);
  CachedOps ops(layer_ops, model.num_layers, layout.ddp);
  const std::vector<StageGroups> groups = stage_groups(layout);
  std::vector<std::vector<GradientBucket>> plans(static_cast<std::size_t>(layout.pp));
  if (layout.gather_buckets && parallel.overlap_param_gather)
    for (int s = 0; s < layout.pp; ++s) plans[static_cast<std::size_t>(s)] = plan_buckets(layout, parallel.schedule, ops, s);
  const AsyncTraffic async(layout, parallel, training, out.num_gpus);
  StageEnd end(out, async, training);
  out.graph.reserve(task_bound(layout, model, parallel, ops, iterations));

  std::optional<ActivationOffload> offload;
  if (parallel.offloaded_layers > 0 && layout.pp != 1)
    throw std::invalid_argument("cpu_offloading needs pipeline_model_parallel_size 1");
  // One stage holds every layer (cpu_offloading needs pp = 1).
  if (parallel.offloaded_layers > 0)
    offload.emplace(out.graph, layers_activation_bytes(model, training, parallel), parallel.offloaded_layers);
  const GraphInputs in{layout, parallel, ops, out.graph, offload ? &*offload : nullptr};
  std::vector<StageCarry> carry(static_cast<std::size_t>(layout.pp));
  for (int it = 0; it < iterations; ++it) {
    PassLinks links(layout);
    for (int s = 0; s < layout.pp; ++s) {
      const auto su = static_cast<std::size_t>(s);
      StageIteration stage(in, s, it, groups[su], carry[su], links, plans[su]);
      if (parallel.expert_a2a_overlap) {
        add_expert_overlap_schedule(stage);
        end.add(stage);
        continue;
      }
      for (const PipelineStep& step :
           pipeline_steps(parallel.schedule, layout.pp, s, layout.microbatches, layout.chunks)) {
        stage.emit.set_context(it, step.microbatch);
        stage.emit.begin_pass();
        if (layout.zero3) add_zero3_pass(stage, step);
        else if (step.forward) add_forward_pass(stage, step);
        else add_backward_pass(stage, step);
      }
      end.add(stage);
    }
    links.connect(out.graph);
  }
  return out;
}

}  // namespace trainsim::workload
