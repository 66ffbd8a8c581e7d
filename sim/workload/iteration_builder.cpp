#include "workload/iteration_builder.h"

#include <algorithm>
#include <array>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>

#include "workload/layout.h"
#include "workload/memory.h"
#include "workload/parameters.h"
#include "workload/pipeline_schedule.h"
#include "workload/transformer_ops.h"

namespace trainsim::workload {

namespace {

using Members = std::vector<std::vector<long long>>;

struct GradientBucket {
  double params = 0.0;
  TaskId ready_after = 0;  // the backward task that completes its last gradient
  bool expert = false;     // expert weights: reduced over the expert data-parallel group
};

// The units whose parameters a ZeRO gather covers: decoder layers by index, and
// these two outside them.
constexpr long long kEmbeddingUnit = -1;
constexpr long long kHeadUnit = -2;

// A gradient bucket of a stage and the units whose parameters it holds (ZeRO-1/2
// gather the updated parameters bucket by bucket; Megatron-LM's param and grad
// buffers share one bucket layout).
struct BucketPlan {
  double params = 0.0;
  std::vector<long long> units;
  bool expert = false;
};

// ZeRO-3: what one unit computes in a pass, gathered and reduced as one.
struct ZeroUnit {
  std::string name;
  long long layer = -1;
  double params = 0.0;
  std::vector<std::pair<std::vector<Op>, Category>> parts;
};

// A group of explicit ranks: `groups.front()` is the group, the rest its
// symmetric copies that run the same collective at the same time.
net::CommGroup explicit_group(const net::CommGroup& shape, Members groups) {
  net::CommGroup g = shape;
  g.members = std::make_shared<const Members>(std::move(groups));
  return g;
}

// The groups a stage rank's communication markers run over, by CommScope.
struct ScopeGroups {
  net::CommGroup tensor;
  net::CommGroup context;  // ring steps: send_recv to the next context-parallel rank
  net::CommGroup expert;
  [[nodiscard]] const net::CommGroup& of(CommScope scope) const {
    switch (scope) {
      case CommScope::kContext: return context;
      case CommScope::kExpert: return expert;
      case CommScope::kTensor: break;
    }
    return tensor;
  }
};

Stream stream_of(CommScope scope) {
  switch (scope) {
    case CommScope::kContext: return Stream::kCpComm;
    case CommScope::kExpert: return Stream::kEpComm;
    case CommScope::kTensor: break;
  }
  return Stream::kTpComm;
}

// The op lists of a graph, each built once: a stage repeats a layer's lists for
// every micro-batch, and building them (names, FLOPs, bytes) costs more than
// adding their tasks (a strategy sweep builds thousands of graphs; docs/sweep.md).
class CachedOps {
 public:
  // A graph has one recompute granularity: the first layer_recompute() call's.
  CachedOps(const TransformerOps& ops, long long layers) : ops_(ops), layers_(3 * static_cast<std::size_t>(layers)) {}

  const std::vector<Op>& layer_forward(long long l) { return layer(0, l, Recompute::kNone); }
  const std::vector<Op>& layer_backward(long long l) { return layer(1, l, Recompute::kNone); }
  const std::vector<Op>& layer_recompute(long long l, Recompute granularity) { return layer(2, l, granularity); }
  const std::vector<Op>& embedding_forward() { return once(embedding_forward_, &TransformerOps::embedding_forward); }
  const std::vector<Op>& embedding_backward() { return once(embedding_backward_, &TransformerOps::embedding_backward); }
  const std::vector<Op>& head_forward() { return once(head_forward_, &TransformerOps::head_forward); }
  const std::vector<Op>& head_backward() { return once(head_backward_, &TransformerOps::head_backward); }
  [[nodiscard]] Op optimizer_step(double params) const { return ops_.optimizer_step(params); }

 private:
  const std::vector<Op>& layer(std::size_t kind, long long l, Recompute granularity) {
    std::optional<std::vector<Op>>& slot = layers_[3 * static_cast<std::size_t>(l) + kind];
    if (!slot)
      slot = kind == 0 ? ops_.layer_forward(l) : kind == 1 ? ops_.layer_backward(l) : ops_.layer_recompute(l, granularity);
    return *slot;
  }
  const std::vector<Op>& once(std::optional<std::vector<Op>>& slot, std::vector<Op> (TransformerOps::*make)() const) {
    if (!slot) slot = (ops_.*make)();
    return *slot;
  }

  const TransformerOps& ops_;
  std::vector<std::optional<std::vector<Op>>> layers_;  // (forward, backward, recompute) per layer
  std::optional<std::vector<Op>> embedding_forward_, embedding_backward_, head_forward_, head_backward_;
};

// Emits the tasks of one stage rank: compute ops on the compute stream, the
// communication markers as collectives on their group's stream between them.
class StageEmitter {
 public:
  StageEmitter(TaskGraph& graph, int rank, ScopeGroups groups)
      : graph_(graph), rank_(rank), groups_(std::move(groups)) {}

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
      if (op.comm_marker) {
        if (op.comm_forward && groups_.of(op.scope).size > 1) {
          if (op.overlapped) ring_.push_back(add_comm(op));
          else last_ = add_comm(op);
        }
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
      if (op.waits_for_ring && !ring_.empty()) {
        t.deps.push_back(ring_.front());
        ring_.pop_front();
      }
      last_ = graph_.add(std::move(t));
      if (!first_) first_ = last_;
      ids.push_back(*last_);
    }
    return ids;
  }

  [[nodiscard]] TaskId last() const { return last_.value_or(0); }
  [[nodiscard]] std::optional<TaskId> last_task() const { return last_; }
  // The next task added waits for `id` too (a parameter gather on another stream).
  void wait_for(TaskId id) { pending_.push_back(id); }

 private:
  // A blocking marker's collective starts after the compute before it and the
  // next compute waits for it; an overlapped one runs beside that compute.
  TaskId add_comm(const Op& op) {
    Task t;
    t.name = op.name;
    t.rank = rank_;
    t.stream = stream_of(op.scope);
    t.category = category_of(*op.comm_forward);
    t.collective = net::Collective{*op.comm_forward, op.comm_bytes, groups_.of(op.scope)};
    t.iteration = iteration_;
    t.microbatch = microbatch_;
    t.layer = op.layer;
    if (last_) t.deps.push_back(*last_);
    if (!op.overlapped) {
      t.deps.insert(t.deps.end(), pending_.begin(), pending_.end());
      pending_.clear();
    }
    const TaskId id = graph_.add(std::move(t));
    if (!first_) first_ = id;
    if (!op.overlapped) after_comm_ = id;
    return id;
  }

  TaskGraph& graph_;
  int rank_;
  ScopeGroups groups_;
  std::deque<TaskId> ring_;  // overlapped ring transfers not yet waited for
  int iteration_ = 0;
  int microbatch_ = -1;
  std::vector<TaskId> pending_;
  std::optional<TaskId> after_comm_;
  std::optional<TaskId> last_;
  std::optional<TaskId> first_;
};


}  // namespace

IterationWork iteration_work(const ModelConfig& model, const TrainingConfig& training, const ParallelConfig& parallel) {
  const long long microbatches = microbatches_per_replica(training, parallel);
  const TransformerOps whole(model, training, training.micro_batch_size);
  return {training.global_batch_size * model.seq_length,
          whole.model_flops_per_microbatch() * static_cast<double>(microbatches) * parallel.data};
}

IterationGraph build_iteration_graph(const ModelConfig& model, const TrainingConfig& training,
                                     const ParallelConfig& parallel, const hw::ClusterSpec& cluster, int iterations) {
  if (iterations < 1) throw std::invalid_argument("iterations must be at least 1");
  const int tp = parallel.tensor;
  const int pp = parallel.pipeline;
  const int dp = parallel.data;
  const int cp = parallel.context;
  const int ep = parallel.expert;
  if (cp < 1 || ep < 1 || dp % ep != 0)
    throw std::invalid_argument("expert-parallel size must divide the data-parallel size");
  // Weights are replicated over the data- and context-parallel ranks, expert
  // weights over the dp x cp / ep ranks holding the same experts (Megatron-LM).
  const int dense_dp = dp * cp;
  const int expert_dp = dense_dp / ep;
  if (parallel.zero_stage >= 3 && model.is_moe() && ep > 1)
    throw std::invalid_argument("ZeRO-3 with expert parallelism is not supported");
  const long long replicas_batch = training.micro_batch_size * dp;
  if (training.global_batch_size % replicas_batch != 0)
    throw std::invalid_argument("global batch not divisible by micro-batch x data-parallel size");
  const long long ranks_per_stage = static_cast<long long>(tp) * cp * dp;
  if (ranks_per_stage * pp != cluster.num_gpus())
    throw std::invalid_argument("tp x cp x dp x pp is not the number of GPUs");

  IterationGraph out;
  out.iterations = iterations;
  out.num_microbatches = microbatches_per_replica(training, parallel);
  out.num_gpus = cluster.num_gpus();
  // Rank order tp-cp-ep-dp-pp: stage s holds ranks [s tp dp, (s+1) tp dp); its
  // rank s tp dp stands for every rank of the stage (DESIGN.md, "Scale").
  out.representative.resize(static_cast<std::size_t>(out.num_gpus));
  for (long long r = 0; r < out.num_gpus; ++r)
    out.representative[static_cast<std::size_t>(r)] = static_cast<int>((r / ranks_per_stage) * ranks_per_stage);
  for (int s = 0; s < pp; ++s) out.simulated_ranks.push_back(static_cast<int>(s * ranks_per_stage));

  const TransformerOps layer_ops(model, training, training.micro_batch_size, tp, parallel.sequence_parallel, cp,
                                 ep);
  CachedOps ops(layer_ops, model.num_layers);
  const IterationWork work = iteration_work(model, training, parallel);
  out.tokens_per_iteration = work.tokens;
  out.model_flops_per_iteration = work.model_flops;

  const int chunks = model_chunks(model.num_layers, parallel);
  const int virtual_stages = pp * chunks;
  if (model.num_layers < virtual_stages) throw std::invalid_argument("fewer layers than pipeline stages");
  out.layers_per_virtual_stage = split_layers(model.num_layers, virtual_stages);
  std::vector<long long> first_layer(static_cast<std::size_t>(virtual_stages), 0);
  for (int j = 1; j < virtual_stages; ++j)
    first_layer[static_cast<std::size_t>(j)] =
        first_layer[static_cast<std::size_t>(j - 1)] + out.layers_per_virtual_stage[static_cast<std::size_t>(j - 1)];
  const auto rank_of_stage = [&](int s) { return static_cast<long long>(s) * ranks_per_stage; };

  // Groups with their real ranks, in the order tp-cp-ep-dp-pp: a stage rank is
  // base + i + tp (c + cp (x + ep d)) for TP index i, context index c and
  // data-parallel index x + ep d (x: its place in the expert-parallel group).
  // TP peers are adjacent; their copies on other nodes share no link, so they are
  // listed only when the group spans nodes. DP peers are tp ranks apart; the tp
  // copies of a DP group share the NICs.
  const int gpn = cluster.gpus_per_node;
  const net::CommGroup tp_shape = group_shape(tp, 1, gpn);
  const net::CommGroup dp_shape = group_shape(dense_dp, tp, gpn);
  const net::CommGroup cp_shape = group_shape(cp, tp, gpn);
  const net::CommGroup ep_shape = group_shape(ep, static_cast<long long>(tp) * cp, gpn);
  const auto at = [&](long long base, int i, int c, int x) {
    return base + i + static_cast<long long>(tp) * (c + static_cast<long long>(cp) * x);
  };
  std::vector<ScopeGroups> scope_groups;
  std::vector<net::CommGroup> dp_groups;
  std::vector<net::CommGroup> expert_dp_groups;
  for (int s = 0; s < pp; ++s) {
    const long long base = rank_of_stage(s);
    ScopeGroups groups;
    Members tps;
    for (int d = 0; d < (tp_shape.nodes > 1 ? dense_dp : 1); ++d) {
      tps.emplace_back();
      for (int i = 0; i < tp; ++i) tps.back().push_back(base + static_cast<long long>(d) * tp + i);
    }
    groups.tensor = explicit_group(tp_shape, std::move(tps));
    // Ring attention: every context rank sends to the next at once; a pair that
    // crosses nodes (the ring's wrap-around) goes first so the analytic model
    // prices the slowest link.
    if (cp > 1) {
      Members pairs;
      for (int i = 0; i < (cp_shape.nodes > 1 ? tp : 1); ++i)
        for (int c = 0; c < cp; ++c) pairs.push_back({at(base, i, c, 0), at(base, i, (c + 1) % cp, 0)});
      const auto crosses = [&](const std::vector<long long>& pair) { return pair[0] / gpn != pair[1] / gpn; };
      const auto first_across = std::find_if(pairs.begin(), pairs.end(), crosses);
      if (first_across != pairs.end()) std::iter_swap(pairs.begin(), first_across);
      const bool across = crosses(pairs.front());
      groups.context = explicit_group(net::CommGroup{2, across ? 2 : 1, across ? 1 : 2, nullptr}, std::move(pairs));
    }
    if (ep > 1) {
      Members eps;
      for (int i = 0; i < (ep_shape.nodes > 1 ? tp : 1); ++i)
        for (int c = 0; c < (ep_shape.nodes > 1 ? cp : 1); ++c) {
          eps.emplace_back();
          for (int x = 0; x < ep; ++x) eps.back().push_back(at(base, i, c, x));
        }
      groups.expert = explicit_group(ep_shape, std::move(eps));
    }
    scope_groups.push_back(std::move(groups));
    Members dps;
    for (int i = 0; i < tp; ++i) {
      dps.emplace_back();
      for (int d = 0; d < dense_dp; ++d) dps.back().push_back(base + i + static_cast<long long>(d) * tp);
    }
    dp_groups.push_back(explicit_group(dp_shape, std::move(dps)));
    // Expert weights: the ranks holding the same experts (same place x in their
    // expert-parallel group), over all context ranks.
    if (ep > 1 && expert_dp > 1) {
      Members edps;
      for (int i = 0; i < tp; ++i)
        for (int x = 0; x < ep; ++x) {
          edps.emplace_back();
          for (int d = 0; d < dp / ep; ++d)
            for (int c = 0; c < cp; ++c) edps.back().push_back(at(base, i, c, x + ep * d));
        }
      const net::CommGroup shape = members_shape(edps.front(), gpn);
      expert_dp_groups.push_back(explicit_group(shape, std::move(edps)));
    } else {
      expert_dp_groups.push_back(dp_groups.back());
    }
  }
  // Activations and their gradients between stages: b s h / t per TP rank
  // (Megatron-LM's scatter-gather; with SP they are split already).
  // Context parallelism: the rank's s/c tokens.
  const double p2p_bytes = static_cast<double>(training.micro_batch_size) * static_cast<double>(model.seq_length) *
                           static_cast<double>(model.hidden_size) * activation_element_bytes(training) / tp / cp;
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

  // ZeRO (docs/strategies.md, "ZeRO and the distributed optimizer"): with one
  // data-parallel rank there is nothing to shard and every stage runs as stage 0.
  const bool shard_optimizer = parallel.zero_stage >= 1 && dense_dp > 1;
  const bool zero3 = parallel.zero_stage >= 3 && dense_dp > 1;
  const bool gather_buckets = shard_optimizer && !zero3;  // ZeRO-1/2, Megatron's distributed optimizer
  if (zero3 && pp > 1) throw std::invalid_argument("ZeRO-3 with pipeline parallelism is not supported");
  const double weight_bytes = state_bytes_per_parameter(training).weights;
  const double bucket_limit = parallel.overlap_grad_reduce ? static_cast<double>(parallel.bucket_size_params()) : 1e300;
  // The gradient buckets of each stage and the units they hold, as the last
  // backward pass of the iteration forms them (the same walk as below).
  const auto plan_buckets = [&](int s) {
    std::vector<BucketPlan> plan;
    std::array<BucketPlan, 2> open_of;  // dense, expert
    open_of[1].expert = true;
    const auto take = [&](const std::vector<Op>& list, long long unit) {
      for (const Op& op : list) {
        if (op.grad_params <= 0.0 || op.comm_marker) continue;
        BucketPlan& open = open_of[op.expert_params ? 1 : 0];
        open.params += op.grad_params;
        if (open.units.empty() || open.units.back() != unit) open.units.push_back(unit);
        if (open.params >= bucket_limit) {
          plan.push_back(std::move(open));
          open = {};
          open.expert = op.expert_params;
        }
      }
    };
    std::vector<int> left(static_cast<std::size_t>(chunks), static_cast<int>(out.num_microbatches));
    for (const PipelineStep& step :
         pipeline_steps(parallel.schedule, pp, s, static_cast<int>(out.num_microbatches), chunks)) {
      if (step.forward || --left[static_cast<std::size_t>(step.chunk)] != 0) continue;
      const int j = step.chunk * pp + s;
      const long long first = first_layer[static_cast<std::size_t>(j)];
      const long long count = out.layers_per_virtual_stage[static_cast<std::size_t>(j)];
      if (j == last_virtual) take(ops.head_backward(), kHeadUnit);
      for (long long l = first + count - 1; l >= first; --l) take(ops.layer_backward(l), l);
      if (j == 0) take(ops.embedding_backward(), kEmbeddingUnit);
    }
    for (BucketPlan& open : open_of)
      if (open.params > 0.0) plan.push_back(std::move(open));
    return plan;
  };
  std::vector<std::vector<BucketPlan>> plans(static_cast<std::size_t>(pp));
  if (gather_buckets && parallel.overlap_param_gather)
    for (int s = 0; s < pp; ++s) plans[static_cast<std::size_t>(s)] = plan_buckets(s);
  // ZeRO-3: parameters of a unit = the gradients its backward completes.
  const auto unit_params = [](const std::vector<Op>& backward) {
    double n = 0.0;
    for (const Op& op : backward)
      if (!op.comm_marker) n += op.grad_params;
    return n;
  };
  // Per stage, across iterations: the optimizer step of the previous iteration,
  // and (ZeRO-1/2 without overlap_param_gather) the gathers the next one waits for.
  std::vector<std::optional<TaskId>> previous_step(static_cast<std::size_t>(pp));
  std::vector<std::vector<TaskId>> pending_gathers(static_cast<std::size_t>(pp));

  // Asynchronous modes (docs/model.md, "Asynchronous training"): no gradient
  // reduction between replicas. async_ps pushes each bucket to the servers, 1/S
  // to each, and pulls the parameters back; this graph holds one worker's
  // traffic alone, the queueing of all workers at the servers is replayed by
  // exec::replay_async_ps. Local SGD averages parameters every sync_period steps.
  const bool asynchronous = parallel.mode != TrainingMode::kSync;
  const double master_bytes = activation_element_bytes(training) < 4.0 ? 4.0 : weight_bytes;
  const std::vector<long long> servers =
      parallel.mode == TrainingMode::kAsyncPs
          ? parameter_server_ranks(parallel.num_servers, parallel.server_placement == ServerPlacement::kDedicated,
                                   out.num_gpus, gpn)
          : std::vector<long long>{};
  const double share = 1.0 / static_cast<double>(std::max(1, parallel.num_servers));
  // Every rank <-> server pair as one send_recv group: the pairs run at once.
  const auto server_pairs = [&](long long rank, bool to_servers) -> std::optional<net::CommGroup> {
    Members pairs;
    for (long long server : servers)
      if (server != rank) pairs.push_back(to_servers ? std::vector<long long>{rank, server}
                                                     : std::vector<long long>{server, rank});
    if (pairs.empty()) return std::nullopt;  // the only server is this GPU's own
    const net::CommGroup shape = members_shape(pairs.front(), gpn);
    return explicit_group(shape, std::move(pairs));
  };
  const auto add_async_traffic = [&](int rank, std::size_t su, int it, TaskId last_backward,
                                     const std::vector<GradientBucket>& buckets, double params) {
    if (parallel.mode != TrainingMode::kAsyncPs) return;
    std::vector<TaskId> pushes;
    if (const auto to = server_pairs(rank, true))
      for (std::size_t i = 0; i < buckets.size(); ++i) {
        Task t;
        t.name = "ps_push.bucket" + std::to_string(i);
        t.rank = rank;
        t.stream = Stream::kDpComm;
        t.category = Category::kSend;
        t.collective = net::Collective{net::CollectiveKind::kSendRecv, buckets[i].params * grad_bytes * share, *to};
        t.deps = {parallel.overlap_grad_reduce ? buckets[i].ready_after : last_backward};
        t.iteration = it;
        pushes.push_back(g.add(std::move(t)));
      }
    const auto from = server_pairs(rank, false);
    if (!from) return;
    Task t;
    t.name = "ps_pull";
    t.rank = rank;
    t.stream = Stream::kDpComm;
    t.category = Category::kRecv;
    t.collective = net::Collective{net::CollectiveKind::kSendRecv, params * weight_bytes * share, *from};
    t.deps = pushes;
    t.deps.push_back(last_backward);
    t.iteration = it;
    const TaskId pull = g.add(std::move(t));
    // Without staleness the next step computes on the pulled parameters.
    if (parallel.staleness == 0) pending_gathers[su].push_back(pull);
  };
  // Room for every task, so that building moves none: every op of every pass and
  // the transfers for each micro-batch; gradient buckets and their gathers number
  // at most two per backward op of one micro-batch; ZeRO-3 adds a gather per unit
  // and pass and a reduce-scatter per unit.
  const std::size_t per_layer = ops.layer_forward(0).size() + ops.layer_backward(0).size() +
                                ops.layer_recompute(0, parallel.recompute).size() + (zero3 ? 3 : 0);
  const std::size_t per_microbatch = static_cast<std::size_t>(model.num_layers) * per_layer +
                                     ops.embedding_forward().size() + ops.embedding_backward().size() +
                                     ops.head_forward().size() + ops.head_backward().size() +
                                     2 * static_cast<std::size_t>(virtual_stages) + (zero3 ? 6 : 0);
  g.reserve(static_cast<std::size_t>(iterations) * (static_cast<std::size_t>(m) + 2) * per_microbatch);

  for (int it = 0; it < iterations; ++it) {
    // Per (micro-batch, virtual stage): the first task of its forward and
    // backward pass, and the transfers it sends on.
    std::vector<TaskId> fwd_first(slots, 0);
    std::vector<TaskId> bwd_first(slots, 0);
    std::vector<TaskId> fwd_send(slots, 0);
    std::vector<TaskId> bwd_send(slots, 0);
    for (int s = 0; s < pp; ++s) {
      const int rank = static_cast<int>(rank_of_stage(s));
      const auto su = static_cast<std::size_t>(s);
      StageEmitter emit(g, rank, scope_groups[su]);
      const auto param_gather = [&](std::string name, double params, bool expert = false) {
        Task t;
        t.name = std::move(name);
        t.rank = rank;
        t.stream = Stream::kDpComm;
        t.category = Category::kAllGather;
        t.collective = net::Collective{net::CollectiveKind::kAllGather, params * weight_bytes,
                                       expert ? expert_dp_groups[su] : dp_groups[su]};
        t.iteration = it;
        return t;
      };
      // ZeRO-1/2 without overlap: the iteration starts once the previous update is gathered.
      for (TaskId id : pending_gathers[su]) emit.wait_for(id);
      pending_gathers[su].clear();
      // ZeRO-1/2 with overlap_param_gather (Megatron-LM): the previous update's
      // gathers run bucket by bucket in forward order at the start of the
      // iteration; a unit's first forward waits for the buckets holding it.
      std::map<long long, std::vector<TaskId>> unit_gathers;
      const std::vector<BucketPlan>& plan = plans[su];
      for (std::size_t i = plan.size(); i-- > 0;) {
        Task t = param_gather("param_all_gather.bucket" + std::to_string(i), plan[i].params, plan[i].expert);
        if (previous_step[su]) t.deps.push_back(*previous_step[su]);
        const TaskId id = g.add(std::move(t));
        for (long long unit : plan[i].units) unit_gathers[unit].push_back(id);
      }
      const auto gate = [&](long long unit) {
        const auto found = unit_gathers.find(unit);
        if (found == unit_gathers.end()) return;
        for (TaskId id : found->second) emit.wait_for(id);
        unit_gathers.erase(found);
      };
      std::vector<TaskId> reductions;
      double zero3_params = 0.0;
      // Megatron-LM: one bucket for the whole stage unless gradients are reduced
      // while the backward pass runs.
      double stage_params = 0.0;
      double stage_expert_params = 0.0;
      std::vector<GradientBucket> buckets;
      std::array<GradientBucket, 2> open_of;  // dense, expert (Megatron-LM's separate buffers)
      open_of[1].expert = true;
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
        if (zero3) {
          // ZeRO-3 (pp = 1): gather each unit's parameters before it computes,
          // prefetching the next unit with overlap_param_gather; after a unit's
          // backward, reduce-scatter its gradients (every micro-batch).
          std::vector<ZeroUnit> units;
          const auto unit = [&](std::string name, long long layer, const std::vector<Op>& backward_ops) {
            ZeroUnit u;
            u.name = std::move(name);
            u.layer = layer;
            u.params = unit_params(backward_ops);
            return u;
          };
          const std::string pass = step.forward ? ".forward" : ".backward";
          if (step.forward) {
            if (j == 0) {
              units.push_back(unit("embedding", -1, ops.embedding_backward()));
              units.back().parts.emplace_back(ops.embedding_forward(), Category::kForward);
            }
            for (long long l = first; l < first + count; ++l) {
              units.push_back(unit("layer" + std::to_string(l), l, ops.layer_backward(l)));
              units.back().parts.emplace_back(ops.layer_forward(l), Category::kForward);
            }
            if (j == last_virtual) {
              units.push_back(unit("head", -1, ops.head_backward()));
              units.back().parts.emplace_back(ops.head_forward(), Category::kForward);
            }
          } else {
            if (j == last_virtual) {
              units.push_back(unit("head", -1, ops.head_backward()));
              units.back().parts.emplace_back(ops.head_backward(), Category::kBackward);
            }
            for (long long l = first + count - 1; l >= first; --l) {
              units.push_back(unit("layer" + std::to_string(l), l, ops.layer_backward(l)));
              units.back().parts.emplace_back(ops.layer_recompute(l, parallel.recompute), Category::kRecompute);
              units.back().parts.emplace_back(ops.layer_backward(l), Category::kBackward);
            }
            if (j == 0) {
              units.push_back(unit("embedding", -1, ops.embedding_backward()));
              units.back().parts.emplace_back(ops.embedding_backward(), Category::kBackward);
            }
          }
          const bool last_pass = !step.forward && --backwards_left[static_cast<std::size_t>(step.chunk)] == 0;
          std::vector<std::optional<TaskId>> gathers(units.size());
          const auto gather = [&](std::size_t u) {
            if (u >= units.size() || units[u].params <= 0.0 || gathers[u]) return;
            Task t = param_gather("param_all_gather." + units[u].name + pass, units[u].params);
            t.microbatch = step.microbatch;
            t.layer = units[u].layer;
            // Its buffer is free once the unit computed before the current one is done.
            if (const auto before = emit.last_task()) t.deps.push_back(*before);
            else if (previous_step[su]) t.deps.push_back(*previous_step[su]);
            gathers[u] = g.add(std::move(t));
          };
          for (std::size_t u = 0; u < units.size(); ++u) {
            gather(u);
            if (parallel.overlap_param_gather) gather(u + 1);
            if (gathers[u]) emit.wait_for(*gathers[u]);
            for (const auto& [list, category] : units[u].parts) add(list, category);
            if (step.forward || units[u].params <= 0.0) continue;
            if (last_pass) zero3_params += units[u].params;
            Task t;
            t.name = "grad_reduce_scatter." + units[u].name;
            t.rank = rank;
            t.stream = Stream::kDpComm;
            t.category = Category::kReduceScatter;
            t.collective =
                net::Collective{net::CollectiveKind::kReduceScatter, units[u].params * grad_bytes, dp_groups[su]};
            t.deps = {emit.last()};
            t.iteration = it;
            t.microbatch = step.microbatch;
            t.layer = units[u].layer;
            reductions.push_back(g.add(std::move(t)));
          }
          (step.forward ? fwd_first : bwd_first)[k] = emit.first();
          continue;
        }
        if (step.forward) {
          if (j == 0) {
            gate(kEmbeddingUnit);
            add(ops.embedding_forward(), Category::kForward);
          }
          for (long long l = first; l < first + count; ++l) {
            gate(l);
            add(ops.layer_forward(l), Category::kForward);
          }
          if (j == last_virtual) {
            gate(kHeadUnit);
            add(ops.head_forward(), Category::kForward);
          }
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
            if (list[i].grad_params <= 0.0 || list[i].comm_marker) continue;
            if (!last_pass) continue;
            stage_params += list[i].grad_params;
            if (list[i].expert_params) stage_expert_params += list[i].grad_params;
            GradientBucket& open = open_of[list[i].expert_params ? 1 : 0];
            open.params += list[i].grad_params;
            open.ready_after = added[i];
            if (open.params >= bucket_limit) {
              buckets.push_back(open);
              open = {};
              open.expert = list[i].expert_params;
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
      for (const GradientBucket& open : open_of)
        if (open.params > 0.0) buckets.push_back(open);
      // Expert weights held by one rank alone need no reduction.
      if (expert_dp <= 1)
        std::erase_if(buckets, [](const GradientBucket& b) { return b.expert; });
      const TaskId last_backward = emit.last();

      if (asynchronous) {
        add_async_traffic(rank, su, it, last_backward, buckets, stage_params);
      } else if (dense_dp > 1 && !zero3) {
        // ZeRO-1/2 and the distributed optimizer reduce-scatter the same buckets:
        // each rank keeps the reduced gradients of its 1/dp shard.
        const net::CollectiveKind kind =
            shard_optimizer ? net::CollectiveKind::kReduceScatter : net::CollectiveKind::kAllReduce;
        for (std::size_t i = 0; i < buckets.size(); ++i) {
          Task t;
          t.name = (buckets[i].expert ? "expert_" : "") +
                   std::string(shard_optimizer ? "grad_reduce_scatter.bucket" : "grad_all_reduce.bucket") +
                   std::to_string(i);
          t.rank = rank;
          t.stream = Stream::kDpComm;
          t.category = category_of(kind);
          t.collective = net::Collective{kind, buckets[i].params * grad_bytes,
                                         buckets[i].expert ? expert_dp_groups[su] : dp_groups[su]};
          t.deps = {parallel.overlap_grad_reduce ? buckets[i].ready_after : last_backward};
          t.iteration = it;
          reductions.push_back(g.add(std::move(t)));
        }
      }
      if (zero3) stage_params = zero3_params;
      if (s == 0)
        out.gradient_buckets = dense_dp <= 1 ? 0
                               : zero3 ? static_cast<int>(std::count_if(reductions.begin(), reductions.end(),
                                                                        [&](TaskId r) {
                                                                          return g[r].microbatch == 0;
                                                                        }))
                                       : static_cast<int>(buckets.size());
      out.parameters_per_gpu = std::max(out.parameters_per_gpu, stage_params);

      if (parallel.mode == TrainingMode::kAsyncPs) continue;  // the servers update the parameters
      Task step;
      // ZeRO: each rank updates its shard of the parameters: 1/(dp cp) of the
      // dense ones, 1/(dp cp / ep) of the expert ones.
      const double dense_params = stage_params - stage_expert_params;
      const Op op = ops.optimizer_step(shard_optimizer ? dense_params / static_cast<double>(dense_dp) +
                                                             stage_expert_params / static_cast<double>(expert_dp)
                                                       : stage_params);
      step.name = op.name;
      step.rank = rank;
      step.stream = Stream::kCompute;
      step.category = Category::kOptimizer;
      step.compute = op.work;
      step.deps = reductions;
      step.deps.push_back(last_backward);
      step.iteration = it;
      const TaskId step_id = g.add(std::move(step));
      previous_step[su] = step_id;
      // Local SGD: every sync_period steps the replicas average their parameters
      // (the fp32 master copy in mixed precision); the next step waits for it.
      if (parallel.mode == TrainingMode::kLocalSgd && dense_dp > 1 && (it + 1) % parallel.sync_period == 0) {
        Task t;
        t.name = "param_average";
        t.rank = rank;
        t.stream = Stream::kDpComm;
        t.category = Category::kAllReduce;
        t.collective = net::Collective{net::CollectiveKind::kAllReduce, stage_params * master_bytes, dp_groups[su]};
        t.deps = {step_id};
        t.iteration = it;
        pending_gathers[su].push_back(g.add(std::move(t)));
      }
      // ZeRO-1/2 without overlap_param_gather: gather the updated parameters
      // right after the step, in forward order; the next iteration waits for them.
      if (gather_buckets && !parallel.overlap_param_gather)
        for (std::size_t i = buckets.size(); i-- > 0;) {
          Task t = param_gather("param_all_gather.bucket" + std::to_string(i), buckets[i].params, buckets[i].expert);
          t.deps = {step_id};
          pending_gathers[su].push_back(g.add(std::move(t)));
        }
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
