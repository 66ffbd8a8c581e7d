#include "workload/zero3_passes.h"

#include <string>
#include <utility>

namespace trainsim::workload {

namespace {

// What one unit computes in a pass, gathered and reduced as one.
struct ZeroUnit {
  std::string name;
  long long layer = -1;
  double params = 0.0;  // the gradients its backward completes
  std::vector<std::pair<const std::vector<Op>*, Category>> parts;
  Role role = Role::kLayer;
};

double unit_params(const std::vector<Op>& backward) {
  double n = 0.0;
  for (const Op& op : backward)
    if (!op.comm_marker) n += op.grad_params;
  return n;
}

// The units of the pass in the order it computes them.
std::vector<ZeroUnit> pass_units(StageIteration& stage, const PipelineStep& step) {
  const IterationLayout& l = stage.in.layout;
  CachedOps& ops = stage.in.ops;
  const IterationLayout::VirtualStage v = l.virtual_stage(stage.stage, step.chunk);
  const int j = v.index;
  std::vector<ZeroUnit> units;
  const auto unit = [&](std::string name, long long layer, const std::vector<Op>& backward_ops, Role role) {
    units.push_back({std::move(name), layer, unit_params(backward_ops), {}, role});
    return &units.back();
  };
  if (step.forward) {
    if (j == 0) unit("embedding", -1, ops.embedding_backward(), Role::kEmbedding)->parts.emplace_back(
        &ops.embedding_forward(), Category::kForward);
    for (long long layer = v.first; layer < v.end; ++layer)
      unit("layer" + std::to_string(layer), layer, ops.layer_backward(layer), Role::kLayer)
          ->parts.emplace_back(&ops.layer_forward(layer), Category::kForward);
    if (j == l.last_virtual())
      unit("head", -1, ops.head_backward(), Role::kHead)->parts.emplace_back(&ops.head_forward(), Category::kForward);
    return units;
  }
  if (j == l.last_virtual())
    unit("head", -1, ops.head_backward(), Role::kHead)->parts.emplace_back(&ops.head_backward(), Category::kBackward);
  for (long long layer = v.end - 1; layer >= v.first; --layer) {
    ZeroUnit* u = unit("layer" + std::to_string(layer), layer, ops.layer_backward(layer), Role::kLayer);
    u->parts.emplace_back(&ops.layer_recompute(layer, stage.in.parallel.recompute), Category::kRecompute);
    u->parts.emplace_back(&ops.layer_backward(layer), Category::kBackward);
  }
  if (j == 0)
    unit("embedding", -1, ops.embedding_backward(), Role::kEmbedding)
        ->parts.emplace_back(&ops.embedding_backward(), Category::kBackward);
  return units;
}

}  // namespace

void add_zero3_pass(StageIteration& stage, const PipelineStep& step) {
  const IterationLayout& l = stage.in.layout;
  TaskGraph& graph = stage.in.graph;
  StageEmitter& emit = stage.emit;
  const std::vector<ZeroUnit> units = pass_units(stage, step);
  const std::string pass = step.forward ? ".forward" : ".backward";
  const bool last_pass = !step.forward && stage.last_backward_of_chunk(step);
  std::vector<std::optional<TaskId>> gathers(units.size());
  const auto gather = [&](std::size_t u) {
    if (u >= units.size() || units[u].params <= 0.0 || gathers[u]) return;
    Task t = parameter_gather("param_all_gather." + units[u].name + pass, units[u].params, l, stage.groups.data,
                              stage.rank, stage.iteration);
    t.microbatch = step.microbatch;
    t.layer = units[u].layer;
    // Its buffer is free once the unit computed before the current one is done.
    if (const auto before = emit.last_task()) t.deps.push_back(*before);
    else if (stage.carry.previous_step) t.deps.push_back(*stage.carry.previous_step);
    gathers[u] = graph.add(std::move(t));
  };
  for (std::size_t u = 0; u < units.size(); ++u) {
    gather(u);
    if (stage.in.parallel.overlap_param_gather) gather(u + 1);
    if (gathers[u]) emit.wait_for(*gathers[u]);
    for (const auto& [list, category] : units[u].parts) emit.add(*list, category, units[u].role);
    if (step.forward || units[u].params <= 0.0) continue;
    if (last_pass) stage.zero3_params += units[u].params;
    Task t = data_parallel_task(
        "grad_reduce_scatter." + units[u].name, Role::kGradientReduction,
        net::Collective{net::CollectiveKind::kReduceScatter, units[u].params * l.grad_bytes, stage.groups.data},
        stage.rank, stage.iteration);
    t.deps = {emit.last()};
    t.microbatch = step.microbatch;
    t.layer = units[u].layer;
    stage.reductions.push_back(graph.add(std::move(t)));
  }
  const int j = l.virtual_stage(stage.stage, step.chunk).index;
  if (step.forward) stage.links.forward(step.microbatch, j, emit.first(), std::nullopt);
  else stage.links.backward(step.microbatch, j, emit.first(), std::nullopt);
}

}  // namespace trainsim::workload
