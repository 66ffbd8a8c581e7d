// TransformerOps: a mixture-of-experts layer's forward (docs/model.md, "Context
// and expert parallelism"): routing, dispatch, the experts and combine.
#include <algorithm>
#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "workload/transformer_ops.h"

namespace trainsim::workload {

std::vector<Op> TransformerOps::moe_forward(long long layer) const {
  // Megatron-LM's all-to-all token dispatcher (docs/model.md, "Expert
  // parallelism"): route the rank's T/t local tokens (split along the sequence
  // by SP when t > 1), copy each to its k experts, send the copies to the ranks
  // holding those experts (all-to-all over the e expert-parallel ranks), gather
  // them over the TP group (experts are split t ways like the dense MLP), run
  // the rank's E/e experts, and return the outputs the same way. Routing is
  // balanced (the auxiliary loss's aim); with a capacity factor c every expert's
  // input is padded to c times its balanced share
  // (moe_expert_capacity_factor with moe_pad_expert_input_to_capacity).
  // Folded experts (expert_tensor_parallel_size 1, etp_ = 1): no TP gather, whole
  // experts, and each expert computes the copies of the e ranks' local tokens.
  const double h = static_cast<double>(model_.hidden_size);
  const double f = static_cast<double>(model_.expert_ffn()) / etp_;
  const double up = model_.swiglu ? 2.0 * f : f;
  const double bias = model_.add_bias_linear ? 1.0 : 0.0;
  const double experts = static_cast<double>(model_.num_experts);
  const double k = static_cast<double>(model_.moe_router_topk);
  const double c = model_.moe_expert_capacity_factor.value_or(1.0);
  const double local_tokens = tokens_ / sp_;
  const double copies_bytes = c * k * local_tokens * h * act_bytes_;
  const double local_experts = experts / ep_;
  // Tokens each local expert computes: the copies of the e ranks' tokens, after
  // the TP gather (etp_ = tp_: T each) or without it (folded: T / t each).
  const double gathered = etp_ == tp_ ? tokens_ : tokens_ / tp_;
  const double per_expert = c * k * gathered * ep_ / experts;
  const hw::KernelId activation = activation_kernel();

  std::vector<Op> ops;
  // Megatron-Core's TopKRouter.gating runs its own linear (router_gating_linear,
  // in the input's dtype or moe_router_dtype), not a Transformer Engine module:
  // 16 bits under an fp8 recipe.
  Op router = matmul("router", local_tokens, experts, h, h * experts, layer);
  router.work.fp8 = false;
  ops.push_back(std::move(router));
  // Each token's k copies written in expert order, and back after the experts: 2 k
  // rows of h per local token each way (reading and writing them). A permutation's
  // backward is the inverse permutation of the gradient, the same bytes (in
  // Transformer Engine, moe_permute's backward runs the unpermute kernel and the
  // reverse).
  const double permute_bytes = 2.0 * k * local_tokens * h * act_bytes_;
  ops.push_back(elementwise("moe_permute", permute_bytes, 0.0, layer, hw::KernelId::kMoePermute));
  ops.back().backward_bytes = permute_bytes;
  const auto marker = [&](std::string name, CommScope scope, net::CollectiveKind fwd, net::CollectiveKind bwd,
                          double bytes) {
    Op op;
    op.name = std::move(name);
    op.layer = layer;
    op.comm_marker = true;
    op.scope = scope;
    op.comm_forward = fwd;
    op.comm_backward = bwd;
    op.comm_bytes = bytes;
    return op;
  };
  using net::CollectiveKind;
  // moe_shared_expert_overlap (Megatron-Core's MoEAlltoAllTokenDispatcher with
  // shared experts on their own stream): the shared experts' first linear runs
  // beside the dispatch all-to-all and their second beside the combine; the routed
  // experts wait for the dispatch, the unpermutation for the combine.
  const auto tag = [&](std::vector<Op>::iterator from, MoeOverlapPart part) {
    if (shared_overlap_)
      for (; from != ops.end(); ++from) from->moe_part = part;
  };
  tag(ops.begin(), MoeOverlapPart::kRoute);
  if (ep_ > 1.0) {
    ops.push_back(marker("moe_dispatch", CommScope::kExpert, CollectiveKind::kAllToAll, CollectiveKind::kAllToAll,
                         copies_bytes));
    ops.back().overlapped = shared_overlap_;
    tag(ops.end() - 1, MoeOverlapPart::kDispatch);
  }
  if (shared_overlap_) {
    const std::size_t shared_up = ops.size();
    for (Op& op : shared_expert_up(layer)) ops.push_back(std::move(op));
    tag(ops.begin() + static_cast<std::ptrdiff_t>(shared_up), MoeOverlapPart::kSharedUp);
  }
  const std::size_t routed = ops.size();
  if (etp_ > 1.0)
    ops.push_back(marker("moe_f", CommScope::kTensor, CollectiveKind::kAllGather, CollectiveKind::kReduceScatter,
                         copies_bytes * tp_));
  // The alltoall dispatcher's second permutation (dispatch_postprocess,
  // sort_chunks_by_idxs): the tokens this rank's experts compute, received from each
  // rank in expert order, sorted by local expert; the inverse before the combine
  // (combine_preprocess). Each reads and writes them once; a sort's backward is the
  // inverse sort, the same bytes.
  const bool sort_chunks =
      model_.moe_token_dispatcher == ModelConfig::MoeDispatcher::kAllToAll && local_experts > 1.0;
  const double sort_bytes = 2.0 * per_expert * local_experts * h * act_bytes_;
  const auto sort_op = [&](std::string name) {
    Op op = elementwise(std::move(name), sort_bytes, 0.0, layer);
    op.backward_bytes = sort_bytes;
    return op;
  };
  if (sort_chunks) ops.push_back(sort_op("moe_sort_chunks"));
  const int count = static_cast<int>(local_experts);
  Op up_op = matmul("experts_up", per_expert, up, h, local_experts * (h * up + bias * up), layer, count);
  Op down_op = matmul("experts_down", per_expert, h, f, local_experts * (f * h + bias * h), layer, count);
  for (Op* op : {&up_op, &down_op}) {
    op->model_flops /= c;  // padding is not model work
    op->expert_params = true;
    op->work.grouped = true;
  }
  push_gemm(ops, up_op, false);
  ops.push_back(elementwise("experts_act", (up + f) * per_expert * local_experts * act_bytes_, 0.0, layer,
                            activation));
  push_gemm(ops, down_op, false);
  if (sort_chunks) ops.push_back(sort_op("moe_unsort_chunks"));
  if (etp_ > 1.0)
    ops.push_back(marker("moe_g", CommScope::kTensor, CollectiveKind::kReduceScatter, CollectiveKind::kAllGather,
                         copies_bytes * tp_));
  if (shared_overlap_ && ep_ > 1.0) ops[routed].expert_waits = 1;  // the dispatched tokens
  tag(ops.begin() + static_cast<std::ptrdiff_t>(routed), MoeOverlapPart::kRouted);
  const bool combine = ep_ > 1.0;
  if (combine) {
    ops.push_back(marker("moe_combine", CommScope::kExpert, CollectiveKind::kAllToAll, CollectiveKind::kAllToAll,
                         copies_bytes));
    ops.back().overlapped = shared_overlap_;
    tag(ops.end() - 1, MoeOverlapPart::kCombine);
  }
  if (shared_overlap_) {
    const std::size_t down = ops.size();
    for (Op& op : shared_expert_down(layer)) ops.push_back(std::move(op));
    tag(ops.begin() + static_cast<std::ptrdiff_t>(down), MoeOverlapPart::kSharedDown);
  }
  const std::size_t finish = ops.size();
  ops.push_back(elementwise("moe_unpermute", permute_bytes, 0.0, layer, hw::KernelId::kMoeUnpermute));
  ops.back().backward_bytes = permute_bytes;
  if (shared_overlap_ && combine) ops.back().expert_waits = 1;  // the combined tokens
  if (model_.has_shared_expert()) {
    // Megatron-Core's SharedExpertMLP without the overlap: after the routed experts,
    // on the layer's input; its output is added to theirs.
    if (!shared_overlap_) {
      for (Op& op : shared_expert_up(layer)) ops.push_back(std::move(op));
      for (Op& op : shared_expert_down(layer)) ops.push_back(std::move(op));
    }
    // output + shared: read both, write the sum (the rank's T/t tokens with SP).
    ops.push_back(elementwise("shared_add", 3.0 * local_tokens * h * act_bytes_, 0.0, layer));
  }
  tag(ops.begin() + static_cast<std::ptrdiff_t>(finish), MoeOverlapPart::kFinish);
  return ops;
}

// Megatron-Core's SharedExpertMLP: a dense MLP of width
// moe_shared_expert_intermediate_size on the layer's input, split t ways like the
// dense MLP (its own f and g with SP).
std::vector<Op> TransformerOps::shared_expert_up(long long layer) const {
  const double h = static_cast<double>(model_.hidden_size);
  const double fs = static_cast<double>(model_.moe_shared_expert_intermediate_size) / tp_;
  const double up_s = model_.swiglu ? 2.0 * fs : fs;
  const double bias = model_.add_bias_linear ? 1.0 : 0.0;
  std::vector<Op> ops;
  if (tp_ > 1.0) {
    ops.push_back(tp_enter("shared_f", layer));
    // Overlapped, its linears run without TP communication of their own and the
    // gather is explicit (SharedExpertMLP.pre_forward_comm): no column-parallel
    // backward beside the weight gradient.
    ops.back().column_input = !shared_overlap_;
  }
  push_gemm(ops, matmul("shared_up", tokens_, up_s, h, h * up_s + bias * up_s, layer), true);
  ops.push_back(elementwise("shared_act", (up_s + fs) * tokens_ * act_bytes_, 0.0, layer, activation_kernel()));
  ops.back().kernel_class = "gelu";  // SwiGLU too, as the dense MLP's
  return ops;
}

std::vector<Op> TransformerOps::shared_expert_down(long long layer) const {
  const double h = static_cast<double>(model_.hidden_size);
  const double fs = static_cast<double>(model_.moe_shared_expert_intermediate_size) / tp_;
  const double bias = model_.add_bias_linear ? 1.0 : 0.0;
  std::vector<Op> ops;
  push_gemm(ops, matmul("shared_down", tokens_, h, fs, fs * h + bias * h, layer), false);
  if (tp_ > 1.0) ops.push_back(tp_exit("shared_g", layer));
  return ops;
}

// The MoE block's backward under moe_shared_expert_overlap, as Megatron-Core
// launches it ("Backward launch order: probs A2A -> tokens A2A -> shared experts
// fc1", token_dispatcher.py): the unpermutation's, then the combine's all-to-all
// beside the shared experts' second linear, the routed experts (waiting for it),
// then the dispatch's all-to-all beside the shared experts' first linear, and the
// permutation and router (waiting for it).
std::vector<Op> TransformerOps::moe_overlap_backward(const std::vector<Op>& block) const {
  std::vector<Op> plain;  // the block without its all-to-alls and their waits
  std::optional<Op> dispatch;
  std::optional<Op> combine;
  for (const Op& op : block) {
    if (op.moe_part == MoeOverlapPart::kDispatch) dispatch = op;
    else if (op.moe_part == MoeOverlapPart::kCombine) combine = op;
    else {
      plain.push_back(op);
      plain.back().expert_waits = 0;
    }
  }
  const auto transfer = [&](const Op& fwd) {
    Op op = backward_of(fwd, 1.0, 1.0);
    op.overlapped = true;
    op.expert_waits = 0;
    return op;
  };
  std::vector<Op> ops;
  std::optional<MoeOverlapPart> waiting;  // the part whose first op waits for the last transfer
  for (Op& op : reverse_pass(plain)) {
    if (op.moe_part == MoeOverlapPart::kSharedDown && combine) {
      ops.push_back(transfer(*combine));
      combine.reset();
      waiting = MoeOverlapPart::kRouted;
    } else if (op.moe_part == MoeOverlapPart::kSharedUp && dispatch) {
      ops.push_back(transfer(*dispatch));
      dispatch.reset();
      waiting = MoeOverlapPart::kRoute;
    }
    if (waiting && op.moe_part == *waiting) {
      ++op.expert_waits;
      waiting.reset();
    }
    ops.push_back(std::move(op));
  }
  return ops;
}

}  // namespace trainsim::workload
