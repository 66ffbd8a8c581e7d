#include "workload/stage_iteration.h"

namespace trainsim::workload {

PassLinks::PassLinks(const IterationLayout& layout)
    : layout_(layout),
      fwd_first_(layout.slots(), 0),
      bwd_first_(layout.slots(), 0),
      fwd_send_(layout.slots(), 0),
      bwd_send_(layout.slots(), 0) {}

void PassLinks::forward(int microbatch, int virtual_stage, TaskId first, std::optional<TaskId> send) {
  const std::size_t k = layout_.slot(microbatch, virtual_stage);
  fwd_first_[k] = first;
  if (send) fwd_send_[k] = *send;
}

void PassLinks::backward(int microbatch, int virtual_stage, TaskId first, std::optional<TaskId> send) {
  const std::size_t k = layout_.slot(microbatch, virtual_stage);
  bwd_first_[k] = first;
  if (send) bwd_send_[k] = *send;
}

void PassLinks::connect(TaskGraph& graph) const {
  for (int mb = 0; mb < layout_.microbatches; ++mb)
    for (int j = 0; j < layout_.virtual_stages; ++j) {
      if (j > 0) graph.add_dep(fwd_first_[layout_.slot(mb, j)], fwd_send_[layout_.slot(mb, j - 1)]);
      if (j < layout_.last_virtual()) graph.add_dep(bwd_first_[layout_.slot(mb, j)], bwd_send_[layout_.slot(mb, j + 1)]);
    }
}

StageIteration::StageIteration(const GraphInputs& inputs, int stage_index, int iteration_index,
                               const StageGroups& stage_groups, StageCarry& stage_carry, PassLinks& pass_links,
                               const std::vector<GradientBucket>& plan)
    : in(inputs),
      stage(stage_index),
      rank(static_cast<int>(inputs.layout.rank_of_stage(stage_index))),
      iteration(iteration_index),
      groups(stage_groups),
      carry(stage_carry),
      links(pass_links),
      emit(inputs.graph, rank, stage_groups.scope),
      grads(inputs.layout.bucket_limit, inputs.layout.first_bucket_limit),
      backwards_left_(static_cast<std::size_t>(inputs.layout.chunks), inputs.layout.microbatches) {
  // ZeRO-1/2 without overlap, local SGD, async_ps without staleness: the
  // iteration starts once the previous update is in.
  for (TaskId id : carry.pending_gathers) emit.wait_for(id);
  carry.pending_gathers.clear();
  gates = ParameterGates(in.graph, plan, carry.previous_step, in.layout, groups, rank, iteration);
}

bool StageIteration::last_backward_of_chunk(const PipelineStep& step) {
  return --backwards_left_[static_cast<std::size_t>(step.chunk)] == 0;
}

void StageIteration::gate(long long unit) {
  for (TaskId id : gates.take(unit)) emit.wait_for(id);
}

}  // namespace trainsim::workload
