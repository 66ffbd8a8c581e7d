#include "workload/gradient_buckets.h"

#include <string>
#include <utility>

namespace trainsim::workload {

BucketFiller::BucketFiller(double limit, double first_limit) : limit_(limit), first_limit_(first_limit) {
  open_[1].expert = true;
}

void BucketFiller::add(const std::vector<Op>& ops, long long unit, const std::vector<TaskId>& done) {
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const Op& op = ops[i];
    if (op.grad_params <= 0.0 || op.comm_marker) continue;
    params_ += op.grad_params;
    if (op.expert_params) expert_params_ += op.grad_params;
    GradientBucket& open = open_[op.expert_params ? 1 : 0];
    open.params += op.grad_params;
    open.fp8_params += quantized_weight_params(op);
    if (open.units.empty() || open.units.back() != unit) open.units.push_back(unit);
    if (!done.empty()) open.ready_after = done[i];
    if (open.params >= (full_.empty() ? first_limit_ : limit_)) {
      full_.push_back(std::move(open));
      open = {};
      open.expert = op.expert_params;
    }
  }
}

std::vector<GradientBucket> BucketFiller::finish() {
  std::vector<GradientBucket> out = std::move(full_);
  full_.clear();
  for (GradientBucket& open : open_)
    if (open.params > 0.0) out.push_back(std::move(open));
  return out;
}

std::vector<GradientBucket> plan_buckets(const IterationLayout& layout, PipelineSchedule schedule, CachedOps& ops,
                                         int stage) {
  BucketFiller filler(layout.bucket_limit, layout.first_bucket_limit);
  std::vector<int> left(static_cast<std::size_t>(layout.chunks), layout.microbatches);
  for (const PipelineStep& step : pipeline_steps(schedule, layout.pp, stage, layout.microbatches, layout.chunks)) {
    if (step.forward || --left[static_cast<std::size_t>(step.chunk)] != 0) continue;
    const IterationLayout::VirtualStage v = layout.virtual_stage(stage, step.chunk);
    const int j = v.index;
    if (j == layout.last_virtual()) filler.add(ops.head_backward(), kHeadUnit, {});
    for (long long l = v.end - 1; l >= v.first; --l) filler.add(ops.layer_backward(l), l, {});
    if (j == 0) filler.add(ops.embedding_backward(), kEmbeddingUnit, {});
  }
  return filler.finish();
}

Task data_parallel_task(TaskGraph& graph, std::string name, Role role, net::Collective collective, int rank,
                        int iteration) {
  Task t;
  t.category = category_of(collective.kind);
  Work w;
  w.name = std::move(name);
  w.collective = std::move(collective);
  t.work = graph.add_work(std::move(w));
  t.rank = rank;
  t.stream = Stream::kDpComm;
  t.role = role;
  t.iteration = iteration;
  return t;
}

Task parameter_gather(TaskGraph& graph, std::string name, double bytes, const net::CommGroup& group, int rank,
                      int iteration) {
  return data_parallel_task(graph, std::move(name), Role::kParameterGather,
                            net::Collective{net::CollectiveKind::kAllGather, bytes, group}, rank, iteration);
}

double gather_bytes(const GradientBucket& bucket, const IterationLayout& layout) {
  return (bucket.params - bucket.fp8_params) * layout.weight_bytes + bucket.fp8_params * layout.fp8_gather_bytes;
}

namespace {

const net::CommGroup& group_of(const GradientBucket& bucket, const StageGroups& groups) {
  return bucket.expert ? groups.expert_data : groups.data;
}

std::string bucket_name(std::string_view what, std::size_t i) { return std::string(what) + std::to_string(i); }

}  // namespace

ParameterGates::ParameterGates(TaskGraph& graph, const std::vector<GradientBucket>& plan,
                               std::optional<TaskId> previous_step, const IterationLayout& layout,
                               const StageGroups& groups, int rank, int iteration) {
  for (std::size_t i = plan.size(); i-- > 0;) {
    Task t = parameter_gather(graph, bucket_name("param_all_gather.bucket", i), gather_bytes(plan[i], layout),
                              group_of(plan[i], groups), rank, iteration);
    if (previous_step) t.deps.push_back(*previous_step);
    const TaskId id = graph.add(std::move(t));
    for (long long unit : plan[i].units) gathers_[unit].push_back(id);
  }
}

std::vector<TaskId> ParameterGates::take(long long unit) {
  const auto found = gathers_.find(unit);
  if (found == gathers_.end()) return {};
  std::vector<TaskId> ids = std::move(found->second);
  gathers_.erase(found);
  return ids;
}

std::vector<TaskId> add_gradient_reductions(TaskGraph& graph, const std::vector<GradientBucket>& buckets,
                                            const IterationLayout& layout, bool overlap, const StageGroups& groups,
                                            TaskId last_backward, int rank, int iteration) {
  const net::CollectiveKind kind =
      layout.shard_optimizer ? net::CollectiveKind::kReduceScatter : net::CollectiveKind::kAllReduce;
  const std::string_view what = layout.shard_optimizer ? "grad_reduce_scatter.bucket" : "grad_all_reduce.bucket";
  std::vector<TaskId> ids;
  for (std::size_t i = 0; i < buckets.size(); ++i) {
    const GradientBucket& b = buckets[i];
    Task t = data_parallel_task(graph, (b.expert ? "expert_" : "") + bucket_name(what, i), Role::kGradientReduction,
                                net::Collective{kind, b.params * layout.grad_bytes, group_of(b, groups)}, rank,
                                iteration);
    t.deps = {overlap ? b.ready_after : last_backward};
    ids.push_back(graph.add(std::move(t)));
  }
  return ids;
}

std::vector<TaskId> add_gathers_after_step(TaskGraph& graph, const std::vector<GradientBucket>& buckets,
                                           const IterationLayout& layout, const StageGroups& groups, TaskId step,
                                           int rank, int iteration) {
  std::vector<TaskId> ids;
  for (std::size_t i = buckets.size(); i-- > 0;) {
    Task t = parameter_gather(graph, bucket_name("param_all_gather.bucket", i), gather_bytes(buckets[i], layout),
                              group_of(buckets[i], groups), rank, iteration);
    t.deps = {step};
    ids.push_back(graph.add(std::move(t)));
  }
  return ids;
}

}  // namespace trainsim::workload
