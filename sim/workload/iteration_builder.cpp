#include "workload/iteration_builder.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

#include "workload/layout.h"
#include "workload/parameters.h"
#include "workload/pipeline_schedule.h"
#include "workload/transformer_ops.h"

namespace trainsim::workload {

namespace {

using Members = std::vector<std::vector<long long>>;

struct GradientBucket {
  double params = 0.0;
  TaskId ready_after = 0;  // the backward task that completes its last gradient
};

// A group of explicit ranks: `groups.front()` is the group, the rest its
// symmetric copies that run the same collective at the same time.
net::CommGroup explicit_group(const net::CommGroup& shape, Members groups) {
  net::CommGroup g = shape;
  g.members = std::make_shared<const Members>(std::move(groups));
  return g;
}

// Emits the tasks of one stage rank: compute ops on the compute stream, the
// tensor-parallel markers as collectives on the TP stream between them.
class StageEmitter {
 public:
  StageEmitter(TaskGraph& graph, int rank, const net::CommGroup& tp_group)
      : graph_(graph), rank_(rank), tp_group_(tp_group) {}

  void set_context(int iteration, int microbatch) {
    iteration_ = iteration;
    microbatch_ = microbatch;
  }
  // Starts a pass: first() is then the first task added after this call.
  void begin_pass() { first_.reset(); }
  [[nodiscard]] TaskId first() const { return first_.value_or(0); }

  // Adds `ops`; returns the id of each op's task (markers without a collective
  // in this direction get the id of the task before them).
  std::vector<TaskId> add(const std::vector<Op>& ops, Category category) {
    std::vector<TaskId> ids;
    ids.reserve(ops.size());
    for (const Op& op : ops) {
      if (op.tp_marker) {
        if (op.tp_forward && tp_group_.size > 1) last_ = add_tp(op);
        ids.push_back(last_.value_or(0));
        continue;
      }
      Task t;
      t.name = op.name;
      t.rank = rank_;
      t.stream = Stream::kCompute;
      t.category = category;
      t.compute = op.work;
      t.iteration = iteration_;
      t.microbatch = microbatch_;
      t.layer = op.layer;
      t.model_flops = op.model_flops;
      t.deps = std::move(pending_);
      pending_.clear();
      if (after_comm_) t.deps.push_back(*after_comm_);
      after_comm_.reset();
      last_ = graph_.add(std::move(t));
      if (!first_) first_ = last_;
      ids.push_back(*last_);
    }
    return ids;
  }

  [[nodiscard]] TaskId last() const { return last_.value_or(0); }

 private:
  TaskId add_tp(const Op& op) {
    Task t;
    t.name = op.name;
    t.rank = rank_;
    t.stream = Stream::kTpComm;
    t.category = category_of(*op.tp_forward);
    t.collective = net::Collective{*op.tp_forward, op.tp_bytes, tp_group_};
    t.iteration = iteration_;
    t.microbatch = microbatch_;
    t.layer = op.layer;
    if (last_) t.deps.push_back(*last_);
    t.deps.insert(t.deps.end(), pending_.begin(), pending_.end());
    pending_.clear();
    const TaskId id = graph_.add(std::move(t));
    if (!first_) first_ = id;
    after_comm_ = id;
    return id;
  }

  TaskGraph& graph_;
  int rank_;
  net::CommGroup tp_group_;
  int iteration_ = 0;
  int microbatch_ = -1;
  std::vector<TaskId> pending_;
  std::optional<TaskId> after_comm_;
  std::optional<TaskId> last_;
  std::optional<TaskId> first_;
};


}  // namespace

IterationGraph build_iteration_graph(const ModelConfig& model, const TrainingConfig& training,
                                     const ParallelConfig& parallel, const hw::ClusterSpec& cluster, int iterations) {
  if (parallel.context != 1 || parallel.expert != 1)
    throw std::invalid_argument("context and expert parallelism are not simulated yet");
  if (iterations < 1) throw std::invalid_argument("iterations must be at least 1");
  const int tp = parallel.tensor;
  const int pp = parallel.pipeline;
  const int dp = parallel.data;
  const long long replicas_batch = training.micro_batch_size * dp;
  if (training.global_batch_size % replicas_batch != 0)
    throw std::invalid_argument("global batch not divisible by micro-batch x data-parallel size");
  const long long ranks_per_stage = static_cast<long long>(tp) * dp;
  if (ranks_per_stage * pp != cluster.num_gpus())
    throw std::invalid_argument("tp x pp x dp is not the number of GPUs");

  IterationGraph out;
  out.iterations = iterations;
  out.num_microbatches = training.global_batch_size / replicas_batch;
  out.num_gpus = cluster.num_gpus();
  out.tokens_per_iteration = training.global_batch_size * model.seq_length;
  // Rank order tp-cp-ep-dp-pp: stage s holds ranks [s tp dp, (s+1) tp dp); its
  // rank s tp dp stands for every rank of the stage (DESIGN.md, "Scale").
  out.representative.resize(static_cast<std::size_t>(out.num_gpus));
  for (long long r = 0; r < out.num_gpus; ++r)
    out.representative[static_cast<std::size_t>(r)] = static_cast<int>((r / ranks_per_stage) * ranks_per_stage);
  for (int s = 0; s < pp; ++s) out.simulated_ranks.push_back(static_cast<int>(s * ranks_per_stage));

  const TransformerOps ops(model, training, training.micro_batch_size, tp, parallel.sequence_parallel);
  const TransformerOps whole(model, training, training.micro_batch_size);
  out.model_flops_per_iteration =
      whole.model_flops_per_microbatch() * static_cast<double>(out.num_microbatches) * dp;

  const int chunks = model_chunks(model.num_layers, parallel);
  const int virtual_stages = pp * chunks;
  if (model.num_layers < virtual_stages) throw std::invalid_argument("fewer layers than pipeline stages");
  out.layers_per_virtual_stage = split_layers(model.num_layers, virtual_stages);
  std::vector<long long> first_layer(static_cast<std::size_t>(virtual_stages), 0);
  for (int j = 1; j < virtual_stages; ++j)
    first_layer[static_cast<std::size_t>(j)] =
        first_layer[static_cast<std::size_t>(j - 1)] + out.layers_per_virtual_stage[static_cast<std::size_t>(j - 1)];
  const auto rank_of_stage = [&](int s) { return static_cast<long long>(s) * ranks_per_stage; };

  // Groups with their real ranks. TP peers are adjacent; their copies on other
  // nodes share no link, so they are listed only when the group spans nodes.
  // DP peers are tp ranks apart; the tp copies of a DP group share the NICs.
  const net::CommGroup tp_shape = group_shape(tp, 1, cluster.gpus_per_node);
  const net::CommGroup dp_shape = group_shape(dp, tp, cluster.gpus_per_node);
  std::vector<net::CommGroup> tp_groups;
  std::vector<net::CommGroup> dp_groups;
  for (int s = 0; s < pp; ++s) {
    const long long base = rank_of_stage(s);
    Members tps;
    for (int d = 0; d < (tp_shape.nodes > 1 ? dp : 1); ++d) {
      tps.emplace_back();
      for (int i = 0; i < tp; ++i) tps.back().push_back(base + static_cast<long long>(d) * tp + i);
    }
    tp_groups.push_back(explicit_group(tp_shape, std::move(tps)));
    Members dps;
    for (int i = 0; i < tp; ++i) {
      dps.emplace_back();
      for (int d = 0; d < dp; ++d) dps.back().push_back(base + i + static_cast<long long>(d) * tp);
    }
    dp_groups.push_back(explicit_group(dp_shape, std::move(dps)));
  }
  // Activations and their gradients between stages: b s h / t per TP rank
  // (Megatron-LM's scatter-gather; with SP they are split already).
  const double p2p_bytes = static_cast<double>(training.micro_batch_size) * static_cast<double>(model.seq_length) *
                           static_cast<double>(model.hidden_size) * activation_element_bytes(training) / tp;
  const auto p2p_group = [&](int from, int to) {
    const bool across = rank_of_stage(from) / cluster.gpus_per_node != rank_of_stage(to) / cluster.gpus_per_node;
    net::CommGroup g{2, across ? 2 : 1, across ? 1 : 2, nullptr};
    return explicit_group(g, {{rank_of_stage(from), rank_of_stage(to)}});
  };

  const double grad_bytes = hw::bytes_per_element(training.grad_reduce_dtype);
  const auto m = static_cast<int>(out.num_microbatches);
  TaskGraph& g = out.graph;
  const int last_virtual = virtual_stages - 1;
  const std::size_t slots = static_cast<std::size_t>(m) * static_cast<std::size_t>(virtual_stages);
  const auto slot = [&](int mb, int j) {
    return static_cast<std::size_t>(mb) * static_cast<std::size_t>(virtual_stages) + static_cast<std::size_t>(j);
  };

  for (int it = 0; it < iterations; ++it) {
    // Per (micro-batch, virtual stage): the first task of its forward and
    // backward pass, and the transfers it sends on.
    std::vector<TaskId> fwd_first(slots, 0);
    std::vector<TaskId> bwd_first(slots, 0);
    std::vector<TaskId> fwd_send(slots, 0);
    std::vector<TaskId> bwd_send(slots, 0);
    for (int s = 0; s < pp; ++s) {
      const int rank = static_cast<int>(rank_of_stage(s));
      StageEmitter emit(g, rank, tp_groups[static_cast<std::size_t>(s)]);
      // Megatron-LM: one bucket for the whole stage unless gradients are reduced
      // while the backward pass runs.
      double stage_params = 0.0;
      std::vector<GradientBucket> buckets;
      GradientBucket open;
      const std::vector<PipelineStep> steps = pipeline_steps(parallel.schedule, pp, s, m, chunks);
      std::vector<int> backwards_left(static_cast<std::size_t>(chunks), m);
      for (const PipelineStep& step : steps) {
        const int j = step.chunk * pp + s;
        const long long first = first_layer[static_cast<std::size_t>(j)];
        const long long count = out.layers_per_virtual_stage[static_cast<std::size_t>(j)];
        emit.set_context(it, step.microbatch);
        const std::size_t k = slot(step.microbatch, j);
        emit.begin_pass();
        const auto add = [&](const std::vector<Op>& list, Category c) { return emit.add(list, c); };
        if (step.forward) {
          if (j == 0) add(ops.embedding_forward(), Category::kForward);
          for (long long l = first; l < first + count; ++l) add(ops.layer_forward(l), Category::kForward);
          if (j == last_virtual) add(ops.head_forward(), Category::kForward);
          fwd_first[k] = emit.first();
          if (j < last_virtual) {
            Task t;
            t.name = "send_activation.vstage" + std::to_string(j);
            t.rank = rank;
            t.stream = Stream::kPpComm;
            t.category = Category::kSend;
            t.collective = net::Collective{net::CollectiveKind::kSendRecv, p2p_bytes, p2p_group(s, (j + 1) % pp)};
            t.deps = {emit.last()};
            t.iteration = it;
            t.microbatch = step.microbatch;
            fwd_send[k] = g.add(std::move(t));
          }
          continue;
        }
        const bool last_pass = --backwards_left[static_cast<std::size_t>(step.chunk)] == 0;
        const auto backward = [&](const std::vector<Op>& list) {
          const std::vector<TaskId> added = add(list, Category::kBackward);
          for (std::size_t i = 0; i < list.size(); ++i) {
            if (list[i].grad_params <= 0.0 || list[i].tp_marker) continue;
            if (!last_pass) continue;
            stage_params += list[i].grad_params;
            open.params += list[i].grad_params;
            open.ready_after = added[i];
            const double limit = parallel.overlap_grad_reduce ? static_cast<double>(parallel.bucket_size_params())
                                                              : 1e300;
            if (open.params >= limit) {
              buckets.push_back(open);
              open = {};
            }
          }
        };
        if (j == last_virtual) backward(ops.head_backward());
        for (long long l = first + count - 1; l >= first; --l) {
          add(ops.layer_recompute(l, parallel.recompute), Category::kRecompute);
          backward(ops.layer_backward(l));
        }
        if (j == 0) backward(ops.embedding_backward());
        bwd_first[k] = emit.first();
        if (j > 0) {
          Task t;
          t.name = "send_gradient.vstage" + std::to_string(j);
          t.rank = rank;
          t.stream = Stream::kPpComm;
          t.category = Category::kSend;
          t.collective =
              net::Collective{net::CollectiveKind::kSendRecv, p2p_bytes, p2p_group(s, (j - 1 + pp) % pp)};
          t.deps = {emit.last()};
          t.iteration = it;
          t.microbatch = step.microbatch;
          bwd_send[k] = g.add(std::move(t));
        }
      }
      if (open.params > 0.0) buckets.push_back(open);
      const TaskId last_backward = emit.last();

      std::vector<TaskId> reductions;
      if (dp > 1) {
        for (std::size_t i = 0; i < buckets.size(); ++i) {
          Task t;
          t.name = "grad_all_reduce.bucket" + std::to_string(i);
          t.rank = rank;
          t.stream = Stream::kDpComm;
          t.category = Category::kAllReduce;
          t.collective = net::Collective{net::CollectiveKind::kAllReduce, buckets[i].params * grad_bytes,
                                         dp_groups[static_cast<std::size_t>(s)]};
          t.deps = {parallel.overlap_grad_reduce ? buckets[i].ready_after : last_backward};
          t.iteration = it;
          reductions.push_back(g.add(std::move(t)));
        }
      }
      if (s == 0) out.gradient_buckets = dp > 1 ? static_cast<int>(buckets.size()) : 0;
      out.parameters_per_gpu = std::max(out.parameters_per_gpu, stage_params);

      Task step;
      const Op op = ops.optimizer_step(stage_params);
      step.name = op.name;
      step.rank = rank;
      step.stream = Stream::kCompute;
      step.category = Category::kOptimizer;
      step.compute = op.work;
      step.deps = reductions;
      step.deps.push_back(last_backward);
      step.iteration = it;
      g.add(std::move(step));
    }
    // Each pass waits for what the neighbouring virtual stage sends it.
    for (int mb = 0; mb < m; ++mb)
      for (int j = 0; j < virtual_stages; ++j) {
        if (j > 0) g.add_dep(fwd_first[slot(mb, j)], fwd_send[slot(mb, j - 1)]);
        if (j < last_virtual) g.add_dep(bwd_first[slot(mb, j)], bwd_send[slot(mb, j + 1)]);
      }
  }
  return out;
}

}  // namespace trainsim::workload
