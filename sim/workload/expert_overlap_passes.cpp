// overlap_moe_expert_parallel_comm (docs/model.md, "All-to-alls beside another
// micro-batch"): Megatron-Core's combined 1F1B, one micro-batch's forward and
// another's backward in one pass, layer i of the forward's chunk beside layer
// n_b-1-i of the backward's (TransformerModelChunkSchedulePlan.run,
// TransformerLayerSchedulePlan.run; with pipeline parallelism inside the
// interleaved schedule, combined_1f1b_schedule_for_interleaved_pipelining).
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "workload/pipeline_passes.h"

namespace trainsim::workload {

namespace {

// One combined pass: the forward of `f` and the backward of `b`, as
// TransformerModelChunkSchedulePlan.run launches them. The forward's embedding and the
// backward's head come first, then the layers in pairs, per pair
//   compute:  [b 0] | f 0 (attention .. permute) | b 2 (experts) | f 2 (experts) | b 4 (attention) | f 4
//   all-to-all:      b 1 (combine)  | f 1 (dispatch) | b 3 (dispatch) | f 3 (combine)
// then the backward's layers the forward's chunk lacks, then the forward's the
// backward's lacks; the activations and gradients are sent on (post_forward,
// post_backward), and the forward's head and the backward's embedding end the pass.
class CombinedPass {
 public:
  CombinedPass(StageIteration& stage, const PipelineStep& f, const PipelineStep& b)
      : stage_(stage),
        f_(f),
        b_(b),
        vf_(stage.in.layout.virtual_stage(stage.stage, f.chunk)),
        vb_(stage.in.layout.virtual_stage(stage.stage, b.chunk)),
        last_pass_(stage.last_backward_of_chunk(b)) {}

  void add() {
    const IterationLayout& l = stage_.in.layout;
    CachedOps& ops = stage_.in.ops;
    if (vf_.index == 0) {
      stage_.gate(kEmbeddingUnit);
      forward(ops.embedding_forward(), Role::kEmbedding);
    }
    if (vb_.index == l.last_virtual()) backward(ops.head_backward(), Role::kHead, kHeadUnit);
    const long long nf = vf_.end - vf_.first;
    const long long nb = vb_.end - vb_.first;
    const long long pairs = std::min(nf, nb);
    for (long long i = 0; i < pairs; ++i) add_layer_pair(vf_.first + i, vb_.end - 1 - i);
    for (long long i = pairs; i < nb; ++i) {
      const long long layer = vb_.end - 1 - i;
      recompute(layer);
      backward(ops.layer_backward(layer), Role::kLayer, layer);
    }
    for (long long i = pairs; i < nf; ++i) {
      stage_.gate(vf_.first + i);
      forward(ops.layer_forward(vf_.first + i), Role::kLayer);
    }
    std::optional<TaskId> send_f;
    std::optional<TaskId> send_b;
    if (vf_.index < l.last_virtual())
      send_f = add_pipeline_send(stage_, f_, "send_activation.vstage" + std::to_string(vf_.index),
                                 Role::kActivationSend, stage_.groups.to_next);
    if (vb_.index > 0)
      send_b = add_pipeline_send(stage_, b_, "send_gradient.vstage" + std::to_string(vb_.index), Role::kGradientSend,
                                 stage_.groups.to_previous);
    if (vf_.index == l.last_virtual()) {
      stage_.gate(kHeadUnit);
      forward(ops.head_forward(), Role::kHead);
    }
    if (vb_.index == 0) backward(ops.embedding_backward(), Role::kEmbedding, kEmbeddingUnit);
    // The pass waits for the forward's input first (pre_forward), the backward's
    // gradient before its first op (pre_backward).
    const TaskId first = stage_.emit.first();
    stage_.links.forward(f_.microbatch, vf_.index, first, send_f);
    stage_.links.backward(b_.microbatch, vb_.index, first_backward_.value_or(first), send_b);
  }

 private:
  void add_layer_pair(long long f, long long b) {
    CachedOps& ops = stage_.in.ops;
    recompute(b);
    backward(ops.layer_part(b, false, 0), Role::kLayer, b);
    backward(ops.layer_part(b, false, 1), Role::kLayer, b);
    stage_.gate(f);
    forward(ops.layer_part(f, true, 0), Role::kLayer);
    forward(ops.layer_part(f, true, 1), Role::kLayer);
    backward(ops.layer_part(b, false, 2), Role::kLayer, b);
    backward(ops.layer_part(b, false, 3), Role::kLayer, b);
    forward(ops.layer_part(f, true, 2), Role::kLayer);
    forward(ops.layer_part(f, true, 3), Role::kLayer);
    backward(ops.layer_part(b, false, 4), Role::kLayer, b);
    forward(ops.layer_part(f, true, 4), Role::kLayer);
  }

  void forward(const std::vector<Op>& list, Role role) {
    stage_.emit.set_context(stage_.iteration, f_.microbatch);
    stage_.emit.add(list, Category::kForward, role);
  }
  void backward(const std::vector<Op>& list, Role role, long long unit) {
    stage_.emit.set_context(stage_.iteration, b_.microbatch);
    const std::vector<TaskId> added = stage_.emit.add(list, Category::kBackward, role);
    if (!first_backward_ && !added.empty()) first_backward_ = added.front();
    if (last_pass_) stage_.grads.add(list, unit, added);
  }
  void recompute(long long layer) {
    stage_.emit.set_context(stage_.iteration, b_.microbatch);
    const std::vector<TaskId> added = stage_.emit.add(
        stage_.in.ops.layer_recompute(layer, stage_.in.parallel.recompute), Category::kRecompute, Role::kLayer);
    if (!first_backward_ && !added.empty()) first_backward_ = added.front();
  }

  StageIteration& stage_;
  PipelineStep f_;
  PipelineStep b_;
  IterationLayout::VirtualStage vf_;
  IterationLayout::VirtualStage vb_;
  bool last_pass_;
  std::optional<TaskId> first_backward_;
};

}  // namespace

void add_expert_overlap_schedule(StageIteration& stage) {
  const IterationLayout& l = stage.in.layout;
  for (const CombinedStep& step : combined_1f1b_steps(l.pp, stage.stage, l.microbatches, l.chunks)) {
    stage.emit.begin_pass();
    if (step.forward && step.backward) {
      CombinedPass(stage, *step.forward, *step.backward).add();
      continue;
    }
    const PipelineStep& alone = step.forward ? *step.forward : *step.backward;
    stage.emit.set_context(stage.iteration, alone.microbatch);
    if (alone.forward) add_forward_pass(stage, alone);
    else add_backward_pass(stage, alone);
  }
}

}  // namespace trainsim::workload
