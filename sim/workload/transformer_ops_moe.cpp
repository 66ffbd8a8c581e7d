// TransformerOps: a mixture-of-experts layer's forward (docs/model.md, "Context
// and expert parallelism"): routing, dispatch, the experts and combine.
#include <algorithm>
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
  if (ep_ > 1.0)
    ops.push_back(marker("moe_dispatch", CommScope::kExpert, CollectiveKind::kAllToAll, CollectiveKind::kAllToAll,
                         copies_bytes));
  if (etp_ > 1.0)
    ops.push_back(marker("moe_f", CommScope::kTensor, CollectiveKind::kAllGather, CollectiveKind::kReduceScatter,
                         copies_bytes * tp_));
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
  if (etp_ > 1.0)
    ops.push_back(marker("moe_g", CommScope::kTensor, CollectiveKind::kReduceScatter, CollectiveKind::kAllGather,
                         copies_bytes * tp_));
  if (ep_ > 1.0)
    ops.push_back(marker("moe_combine", CommScope::kExpert, CollectiveKind::kAllToAll, CollectiveKind::kAllToAll,
                         copies_bytes));
  ops.push_back(elementwise("moe_unpermute", permute_bytes, 0.0, layer, hw::KernelId::kMoeUnpermute));
  ops.back().backward_bytes = permute_bytes;
  if (model_.has_shared_expert()) {
    // Megatron-Core's SharedExpertMLP (moe_shared_expert_overlap off): a dense MLP
    // of width moe_shared_expert_intermediate_size on the layer's input, split t
    // ways like the dense MLP (its own f and g with SP), after the routed experts;
    // its output is added to theirs.
    const double fs = static_cast<double>(model_.moe_shared_expert_intermediate_size) / tp_;
    const double up_s = model_.swiglu ? 2.0 * fs : fs;
    if (tp_ > 1.0) ops.push_back(tp_enter("shared_f", layer));
    push_gemm(ops, matmul("shared_up", tokens_, up_s, h, h * up_s + bias * up_s, layer), true);
    ops.push_back(elementwise("shared_act", (up_s + fs) * tokens_ * act_bytes_, 0.0, layer, activation));
    ops.back().kernel_class = "gelu";  // SwiGLU too, as the dense MLP's
    push_gemm(ops, matmul("shared_down", tokens_, h, fs, fs * h + bias * h, layer), false);
    if (tp_ > 1.0) ops.push_back(tp_exit("shared_g", layer));
    // output + shared: read both, write the sum (the rank's T/t tokens with SP).
    ops.push_back(elementwise("shared_add", 3.0 * local_tokens * h * act_bytes_, 0.0, layer));
  }
  return ops;
}

}  // namespace trainsim::workload
