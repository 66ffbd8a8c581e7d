// overlap_moe_expert_parallel_comm without pipeline parallelism (docs/model.md,
// "All-to-alls beside another micro-batch"): Megatron-Core's combined 1F1B, one
// micro-batch's forward and the previous one's backward in one pass, layer i's
// forward beside layer L-1-i's backward (TransformerModelChunkSchedulePlan.run,
// TransformerLayerSchedulePlan.run).
#include "workload/pipeline_passes.h"

namespace trainsim::workload {

namespace {

// Micro-batch `fwd`'s forward and micro-batch `bwd`'s backward. Per layer pair,
// as TransformerLayerSchedulePlan.run launches them:
//   compute:  [b 0] | f 0 (attention .. permute) | b 2 (experts) | f 2 (experts) | b 4 (attention) | f 4
//   all-to-all:      b 1 (combine)  | f 1 (dispatch) | b 3 (dispatch) | f 3 (combine)
void add_combined_pass(StageIteration& stage, int fwd, int bwd) {
  const IterationLayout& l = stage.in.layout;
  CachedOps& ops = stage.in.ops;
  StageEmitter& emit = stage.emit;
  const bool last_pass = stage.last_backward_of_chunk(PipelineStep{false, bwd, 0});
  const auto forward = [&](const std::vector<Op>& list, Role role) {
    emit.set_context(stage.iteration, fwd);
    emit.add(list, Category::kForward, role);
  };
  const auto backward = [&](const std::vector<Op>& list, Role role, long long unit) {
    emit.set_context(stage.iteration, bwd);
    const std::vector<TaskId> added = emit.add(list, Category::kBackward, role);
    if (last_pass) stage.grads.add(list, unit, added);
  };
  const IterationLayout::VirtualStage v = l.virtual_stage(stage.stage, 0);
  stage.gate(kEmbeddingUnit);
  forward(ops.embedding_forward(), Role::kEmbedding);
  backward(ops.head_backward(), Role::kHead, kHeadUnit);
  for (long long i = 0; i < v.end - v.first; ++i) {
    const long long f = v.first + i;
    const long long b = v.end - 1 - i;
    emit.set_context(stage.iteration, bwd);
    emit.add(ops.layer_recompute(b, stage.in.parallel.recompute), Category::kRecompute, Role::kLayer);
    backward(ops.layer_part(b, false, 0), Role::kLayer, b);
    backward(ops.layer_part(b, false, 1), Role::kLayer, b);
    stage.gate(f);
    forward(ops.layer_part(f, true, 0), Role::kLayer);
    forward(ops.layer_part(f, true, 1), Role::kLayer);
    backward(ops.layer_part(b, false, 2), Role::kLayer, b);
    backward(ops.layer_part(b, false, 3), Role::kLayer, b);
    forward(ops.layer_part(f, true, 2), Role::kLayer);
    forward(ops.layer_part(f, true, 3), Role::kLayer);
    backward(ops.layer_part(b, false, 4), Role::kLayer, b);
    forward(ops.layer_part(f, true, 4), Role::kLayer);
  }
  stage.gate(kHeadUnit);
  forward(ops.head_forward(), Role::kHead);
  backward(ops.embedding_backward(), Role::kEmbedding, kEmbeddingUnit);
}

}  // namespace

void add_expert_overlap_schedule(StageIteration& stage) {
  const int m = stage.in.layout.microbatches;
  const auto alone = [&](bool forward, int mb) {
    const PipelineStep step{forward, mb, 0};
    stage.emit.set_context(stage.iteration, mb);
    stage.emit.begin_pass();
    if (forward) add_forward_pass(stage, step);
    else add_backward_pass(stage, step);
  };
  alone(true, 0);
  for (int mb = 1; mb < m; ++mb) {
    stage.emit.begin_pass();
    add_combined_pass(stage, mb, mb - 1);
  }
  alone(false, m - 1);
}

}  // namespace trainsim::workload
