#include "workload/pipeline_passes.h"

#include <string>

namespace trainsim::workload {

TaskId add_pipeline_send(StageIteration& stage, const PipelineStep& step, std::string name, Role role,
                const net::CommGroup& pair) {
  const IterationLayout& l = stage.in.layout;
  Task t;
  Work w;
  w.name = std::move(name);
  w.collective = net::Collective{net::CollectiveKind::kSendRecv, l.p2p_bytes, pair};
  t.work = stage.in.graph.add_work(std::move(w));
  t.rank = stage.rank;
  t.stream = Stream::kPpComm;
  t.category = Category::kSend;
  t.role = role;
  t.deps = {stage.emit.last()};
  t.iteration = stage.iteration;
  t.microbatch = step.microbatch;
  return stage.in.graph.add(std::move(t));
}

void add_forward_pass(StageIteration& stage, const PipelineStep& step) {
  const IterationLayout& l = stage.in.layout;
  CachedOps& ops = stage.in.ops;
  StageEmitter& emit = stage.emit;
  const IterationLayout::VirtualStage v = l.virtual_stage(stage.stage, step.chunk);
  const int j = v.index;
  if (j == 0) {
    stage.gate(kEmbeddingUnit);
    emit.add(ops.embedding_forward(), Category::kForward, Role::kEmbedding);
  }
  ActivationOffload* offload = stage.in.offload;
  for (long long layer = v.first; layer < v.end; ++layer) {
    stage.gate(layer);
    if (offload != nullptr) offload->before_forward(emit, layer);
    emit.add(ops.layer_forward(layer), Category::kForward, Role::kLayer);
    if (offload != nullptr) offload->after_forward(emit, layer);
  }
  if (j == l.last_virtual()) {
    stage.gate(kHeadUnit);
    emit.add(ops.head_forward(), Category::kForward, Role::kHead);
  }
  const TaskId first_task = emit.first();
  std::optional<TaskId> send;
  if (j < l.last_virtual())
    send = add_pipeline_send(stage, step, "send_activation.vstage" + std::to_string(j), Role::kActivationSend,
                    stage.groups.to_next);
  stage.links.forward(step.microbatch, j, first_task, send);
}

void add_backward_pass(StageIteration& stage, const PipelineStep& step) {
  const IterationLayout& l = stage.in.layout;
  CachedOps& ops = stage.in.ops;
  StageEmitter& emit = stage.emit;
  const IterationLayout::VirtualStage v = l.virtual_stage(stage.stage, step.chunk);
  const int j = v.index;
  const bool last_pass = stage.last_backward_of_chunk(step);
  const auto backward = [&](const std::vector<Op>& list, Role role, long long unit) {
    const std::vector<TaskId> added = emit.add(list, Category::kBackward, role);
    if (last_pass) stage.grads.add(list, unit, added);
  };
  if (j == l.last_virtual()) backward(ops.head_backward(), Role::kHead, kHeadUnit);
  for (long long layer = v.end - 1; layer >= v.first; --layer) {
    if (stage.in.offload != nullptr) stage.in.offload->before_backward(emit, layer);
    emit.add(ops.layer_recompute(layer, stage.in.parallel.recompute), Category::kRecompute, Role::kLayer);
    backward(ops.layer_backward(layer), Role::kLayer, layer);
  }
  if (j == 0) backward(ops.embedding_backward(), Role::kEmbedding, kEmbeddingUnit);
  const TaskId first_task = emit.first();
  std::optional<TaskId> send;
  if (j > 0)
    send = add_pipeline_send(stage, step, "send_gradient.vstage" + std::to_string(j), Role::kGradientSend,
                    stage.groups.to_previous);
  stage.links.backward(step.microbatch, j, first_task, send);
}

}  // namespace trainsim::workload
