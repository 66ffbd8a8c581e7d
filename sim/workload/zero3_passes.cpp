#include "workload/zero3_passes.h"

#include <string>
#include <utility>

namespace trainsim::workload {

namespace {

// What one unit computes in a pass, gathered and reduced as one.
struct ZeroUnit {
  std::string name;
  long long layer = -1;
  double params = 0.0;         // the gradients its backward completes
  double expert_params = 0.0;  // of which expert weights
  std::vector<std::pair<const std::vector<Op>*, Category>> parts;
  Role role = Role::kLayer;
  bool gathers = true;  // gathers its parameters before it computes in this pass
  bool reduces = true;  // reduce-scatters its gradients after its backward
};

double unit_params(const std::vector<Op>& backward, bool experts_only) {
  double n = 0.0;
  for (const Op& op : backward)
    if (!op.comm_marker && (!experts_only || op.expert_params)) n += op.grad_params;
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
    units.push_back({std::move(name), layer, unit_params(backward_ops, false), unit_params(backward_ops, true), {}, role});
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

// PyTorch eager under FSDP2 (docs/model.md, "PyTorch eager under FSDP2"): fully_shard
// on each block, then on the model. The root's group (wte, wpe, ln_f; the tied lm_head
// is wte) is gathered by the root's pre-forward and stays unsharded to the end of the
// backward (FSDP2 does not reshard the root after forward); its gradients are
// reduce-scattered after the embedding's backward. The program's forward returns the
// loss, so the root's pre-backward hook fires as the backward starts and prefetches
// the last block then.
std::vector<ZeroUnit> fsdp2_eager_units(StageIteration& stage, const PipelineStep& step) {
  CachedOps& ops = stage.in.ops;
  const IterationLayout::VirtualStage v = stage.in.layout.virtual_stage(stage.stage, step.chunk);
  const double root = unit_params(ops.embedding_backward(), false) + unit_params(ops.head_backward(), false);
  std::vector<ZeroUnit> units;
  const auto unit = [&](std::string name, long long layer, double params, Role role, const std::vector<Op>& list,
                        bool gathers, bool reduces) {
    const Category category = step.forward ? Category::kForward : Category::kBackward;
    units.push_back({std::move(name), layer, params, 0.0, {{&list, category}}, role, gathers, reduces});
  };
  if (step.forward) {
    unit("root", -1, root, Role::kEmbedding, ops.embedding_forward(), true, false);
    for (long long layer = v.first; layer < v.end; ++layer)
      unit("layer" + std::to_string(layer), layer, unit_params(ops.layer_backward(layer), false), Role::kLayer,
           ops.layer_forward(layer), true, true);
    unit("head", -1, 0.0, Role::kHead, ops.head_forward(), false, false);
    return units;
  }
  unit("head", -1, 0.0, Role::kHead, ops.head_backward(), false, false);
  for (long long layer = v.end - 1; layer >= v.first; --layer)
    unit("layer" + std::to_string(layer), layer, unit_params(ops.layer_backward(layer), false), Role::kLayer,
         ops.layer_backward(layer), true, true);
  unit("root", -1, root, Role::kEmbedding, ops.embedding_backward(), false, true);
  return units;
}

}  // namespace

void add_zero3_pass(StageIteration& stage, const PipelineStep& step) {
  const IterationLayout& l = stage.in.layout;
  TaskGraph& graph = stage.in.graph;
  StageEmitter& emit = stage.emit;
  const bool fsdp2 = l.fsdp2;
  const std::vector<ZeroUnit> units = l.fsdp2_eager ? fsdp2_eager_units(stage, step) : pass_units(stage, step);
  const std::string pass = step.forward ? ".forward" : ".backward";
  const bool last_pass = !step.forward && stage.last_backward_of_chunk(step);
  // With expert parallelism a unit's expert weights are sharded over the ranks
  // holding the same experts (expert_data), its dense ones over data; a rank that
  // alone holds its experts gathers and reduces none of them (PyTorch FSDP2 with
  // EP, as NeMo AutoModel shards MoE models; docs/strategies.md).
  const bool split = l.ep > 1;
  const auto shares = [&](const ZeroUnit& u) {
    std::vector<std::pair<double, const net::CommGroup*>> out;
    const double dense = split ? u.params - u.expert_params : u.params;
    if (dense > 0.0) out.emplace_back(dense, &stage.groups.data);
    if (split && u.expert_params > 0.0 && l.expert_dp > 1) out.emplace_back(u.expert_params, &stage.groups.expert_data);
    return out;
  };
  // The parameters a unit gathers and reduces: its shares' (not the experts a rank holds alone).
  const auto communicated = [&](const ZeroUnit& u) {
    double params = 0.0;
    for (const auto& share : shares(u)) params += share.first;
    return params;
  };
  const auto share_name = [&](const ZeroUnit& u, const net::CommGroup* group) {
    return group == &stage.groups.expert_data ? u.name + ".experts" : u.name;
  };
  std::vector<std::vector<TaskId>> gathers(units.size());
  std::vector<bool> gathered(units.size(), false);
  const auto gather = [&](std::size_t u) {
    if (u >= units.size() || units[u].params <= 0.0 || !units[u].gathers || gathered[u]) return;
    gathered[u] = true;
    for (const auto& [params, group] : shares(units[u])) {
      Task t = parameter_gather(graph, "param_all_gather." + share_name(units[u], group) + pass,
                                params * l.weight_bytes, *group, stage.rank, stage.iteration);
      t.microbatch = step.microbatch;
      t.layer = static_cast<std::int32_t>(units[u].layer);
      // Its buffer is free once the unit computed before the current one is done.
      if (const auto before = emit.last_task()) t.deps.push_back(*before);
      else if (stage.carry.previous_step) t.deps.push_back(*stage.carry.previous_step);
      gathers[u].push_back(graph.add(std::move(t)));
    }
  };
  // FSDP2's copies around its collectives: the copy-out reads and writes the unit's
  // gathered parameters, the chunk_cat reads its unsharded gradients (the parameters'
  // type) and writes the reduce-scatter's input (the reduction's type); experts a rank
  // holds alone are neither gathered nor reduced, nor copied.
  const double copy_out_bytes = 2.0 * l.weight_bytes;
  const double chunk_cat_bytes = l.weight_bytes + l.grad_bytes;
  const Category pass_category = step.forward ? Category::kForward : Category::kBackward;
  const hw::HostPass host = step.forward ? hw::HostPass::kForward : hw::HostPass::kBackward;
  for (std::size_t u = 0; u < units.size(); ++u) {
    gather(u);
    if (stage.in.parallel.overlap_param_gather) gather(u + 1);
    for (TaskId g : gathers[u]) emit.wait_for(g);
    if (fsdp2 && !gathers[u].empty())
      emit.add(stage.in.ops.fsdp_copy(units[u].name + std::string(kFsdpCopyOut) + pass,
                                      copy_out_bytes * communicated(units[u]), units[u].layer, host),
               pass_category, units[u].role);
    ActivationOffload* offload = units[u].role == Role::kLayer ? stage.in.offload : nullptr;
    if (offload != nullptr) {
      if (step.forward) offload->before_forward(emit, units[u].layer);
      else offload->before_backward(emit, units[u].layer);
    }
    for (const auto& [list, category] : units[u].parts) emit.add(*list, category, units[u].role);
    if (offload != nullptr && step.forward) offload->after_forward(emit, units[u].layer);
    if (step.forward || units[u].params <= 0.0 || !units[u].reduces) continue;
    if (fsdp2 && communicated(units[u]) > 0.0) {
      // FSDP2's post-backward makes the compute stream wait for the previous unit's
      // reduce-scatter before this unit's copy-in (FSDPParamGroup.post_backward).
      if (!stage.reductions.empty()) emit.wait_for(stage.reductions.back());
      emit.add(stage.in.ops.fsdp_copy(units[u].name + std::string(kFsdpChunkCat),
                                      chunk_cat_bytes * communicated(units[u]), units[u].layer, host),
               pass_category, units[u].role);
    }
    if (last_pass) {
      stage.zero3_params += units[u].params;
      if (split) stage.zero3_expert_params += units[u].expert_params;
    }
    for (const auto& [params, group] : shares(units[u])) {
      Task t = data_parallel_task(graph, "grad_reduce_scatter." + share_name(units[u], group), Role::kGradientReduction,
                                  net::Collective{net::CollectiveKind::kReduceScatter, params * l.grad_bytes, *group},
                                  stage.rank, stage.iteration);
      t.deps = {emit.last()};
      t.microbatch = step.microbatch;
      t.layer = static_cast<std::int32_t>(units[u].layer);
      stage.reductions.push_back(graph.add(std::move(t)));
    }
  }
  const int j = l.virtual_stage(stage.stage, step.chunk).index;
  if (step.forward) stage.links.forward(step.microbatch, j, emit.first(), std::nullopt);
  else stage.links.backward(step.microbatch, j, emit.first(), std::nullopt);
}

}  // namespace trainsim::workload
