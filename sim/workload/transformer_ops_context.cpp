// TransformerOps: context-parallel attention (docs/model.md, "Context and expert
// parallelism"): the ring, Ulysses' all-to-alls, the all-gather method, the
// context group's collectives and the K/V widths they move.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "workload/transformer_ops.h"

namespace trainsim::workload {

namespace {
constexpr double kFp32Bytes = 4.0;  // the attention's log-sum-exp statistics
}  // namespace

// Ring attention (Liu et al. 2023; Megatron-LM's context parallelism through
// Transformer Engine): c blocks, one per K, V chunk, each a c-th of the work
// with the causal mask balanced across ranks (2c chunks per sequence); while
// block i computes, the K, V chunk of block i + 1 arrives from the ring
// neighbour, so c - 1 transfers of the local K and V overlap the blocks. Each
// block reads and writes what the whole attention op does (Q, its K and V chunk,
// O and the log-sum-exp).
std::vector<Op> TransformerOps::ring_attention_forward(const Op& attention, long long layer) const {
  std::vector<Op> ring;
  const int blocks = static_cast<int>(cp_);
  for (int i = 0; i < blocks; ++i) {
    if (i + 1 < blocks) {
      Op kv_step;
      kv_step.name = "attention.ring_kv" + std::to_string(i);
      kv_step.layer = layer;
      kv_step.comm_marker = true;
      kv_step.scope = CommScope::kContext;
      kv_step.overlapped = true;
      kv_step.comm_forward = net::CollectiveKind::kSendRecv;
      kv_step.comm_bytes = ring_kv_bytes();
      ring.push_back(kv_step);
    }
    Op block = attention;
    block.name = "attention.block" + std::to_string(i);
    block.work.flops /= cp_;
    block.model_flops /= cp_;
    block.ring_waits = i > 0 ? 1 : 0;
    ring.push_back(block);
  }
  return ring;
}

// Ulysses (Jacobs et al. 2023, DeepSpeed-Ulysses; Megatron-Core's cp_comm_type
// "a2a" through Transformer Engine): an all-to-all turns the rank's s/c tokens
// of every head into all s tokens of a/c heads for Q, K and V, one kernel attends,
// and another all-to-all returns the output; the same two run backward. The
// kernel's work and bytes equal the ring's total (b s^2 over a/c heads).
std::vector<Op> TransformerOps::ulysses_attention_forward(const Op& attention, double qkv_width, double out_width,
                                                          long long layer) const {
  const auto exchange = [&](std::string name, double width) {
    Op a2a;
    a2a.name = std::move(name);
    a2a.layer = layer;
    a2a.comm_marker = true;
    a2a.scope = CommScope::kContext;
    a2a.comm_forward = net::CollectiveKind::kAllToAll;
    a2a.comm_backward = net::CollectiveKind::kAllToAll;
    a2a.comm_bytes = tokens_ * width * act_bytes_;
    return a2a;
  };
  return {exchange("attention.a2a_qkv", qkv_width), attention, exchange("attention.a2a_out", out_width)};
}

std::vector<Op> TransformerOps::ring_attention_backward(long long layer) const {
  // Transformer Engine's backward ring: block i computes the gradients of the
  // local queries against K, V chunk i and of that chunk's K and V; the chunk
  // and its partial gradient dK, dV move on together (twice the forward bytes).
  // After the last block the accumulated dK, dV return to their owner.
  std::vector<Op> fwd = attention_core_forward(layer);
  std::vector<Op> ops;
  for (const Op& op : fwd) {
    if (op.comm_marker) {
      Op step = op;
      step.name = op.name + "_dkv.backward";
      step.comm_bytes = 2.0 * op.comm_bytes;
      ops.push_back(step);
      continue;
    }
    Op block = backward_of(op, kFlashBackwardFactor, 2.0);
    block.ring_waits = op.ring_waits;
    ops.push_back(block);
  }
  Op home;
  home.name = "attention.ring_dkv_home.backward";
  home.layer = layer;
  home.comm_marker = true;
  home.scope = CommScope::kContext;
  home.comm_forward = net::CollectiveKind::kSendRecv;
  home.comm_bytes = ring_kv_bytes();
  ops.push_back(home);
  for (Op& op : ops) op.name = "layer" + std::to_string(layer) + "." + op.name;
  return ops;
}

// Transformer Engine's AttnFuncWithCPAndKVAllGather (cp_comm_type "all_gather";
// docs/model.md, "Context and expert parallelism"; the method of Llama 3, Dubey
// et al. 2024, section 3.3.2): K and V of the rank's s/c tokens are all-gathered
// over the context group, exposed, one collective each, and put back in sequence
// order (index_select: a read and a write of each gathered tensor). The rank's two
// query chunks (of the 2c load-balanced chunks, numbers r and 2c - 1 - r) attend
// to the keys up to their own, the causal share of (s/c) x s pairs, as one op
// here (Transformer Engine runs the two on two streams); it reads the keys of
// chunks 0..r and 0..2c-1-r, (2c + 1)/2 x s/c tokens, and each chunk's output is
// copied into place.
std::vector<Op> TransformerOps::all_gather_attention_forward(const Op& attention, long long layer) const {
  const double k = attention_k_width();
  const double v = attention_v_width();
  const double q = static_cast<double>(model_.attention_qk_width()) / tp_;
  const double out = static_cast<double>(model_.attention_v_width()) / tp_;
  const double a = static_cast<double>(model_.num_attention_heads) / tp_;
  const double keys_read = (2.0 * cp_ + 1.0) / 2.0;  // x s/c tokens
  const double gathered_k = cp_ * tokens_ * k * act_bytes_;
  const double gathered_v = cp_ * tokens_ * v * act_bytes_;
  const double gathered = cp_ * tokens_ * (k + v) * act_bytes_;
  constexpr auto kGather = net::CollectiveKind::kAllGather;
  std::vector<Op> ops{context_collective("attention.k_all_gather", kGather, gathered_k, layer),
                      context_collective("attention.v_all_gather", kGather, gathered_v, layer),
                      elementwise("attention.kv_reorder", 2.0 * gathered, 0.0, layer)};
  Op op = attention;
  op.work.bytes = tokens_ * (q + out + keys_read * (k + v)) * act_bytes_ + b_ * a * s_ * kFp32Bytes;
  ops.push_back(op);
  ops.push_back(elementwise("attention.out_copy", 2.0 * tokens_ * out * act_bytes_, 0.0, layer));
  for (Op& o : ops)
    if (o.work.kind == hw::KernelClass::kMemoryBound) o.has_backward = false;  // all_gather_attention_backward's
  return ops;
}

// Backward, as Transformer Engine runs it: K and V gathered and reordered again
// (the forward keeps only the local ones), the flash backward of both chunks, dQ
// copied into place, dK and dV accumulated over the full gathered length (a
// zero fill of c x s/c tokens, then per chunk a read of the range and of the
// chunk's gradient and a write of the range: 3 x (2c + 1)/2 x s/c tokens),
// reordered back, and reduce-scattered to their owners, one collective each.
std::vector<Op> TransformerOps::all_gather_attention_backward(long long layer) const {
  const std::vector<Op> fwd = attention_core_forward(layer);
  const double k = attention_k_width();
  const double v = attention_v_width();
  const double q = static_cast<double>(model_.attention_qk_width()) / tp_;
  const double keys_read = (2.0 * cp_ + 1.0) / 2.0;
  const double gathered_k = cp_ * tokens_ * k * act_bytes_;
  const double gathered_v = cp_ * tokens_ * v * act_bytes_;
  const double gathered = cp_ * tokens_ * (k + v) * act_bytes_;
  // The forward's flash op, with the bytes it reads here (all_gather_attention_forward).
  const auto attention = std::find_if(fwd.begin(), fwd.end(), [](const Op& op) {
    return op.work.kind == hw::KernelClass::kAttention && !op.comm_marker;
  });
  std::vector<Op> ops{
      context_collective("attention.k_all_gather.backward", net::CollectiveKind::kAllGather, gathered_k, layer),
      context_collective("attention.v_all_gather.backward", net::CollectiveKind::kAllGather, gathered_v, layer),
      elementwise("attention.kv_reorder.backward", 2.0 * gathered, 0.0, layer),
      backward_of(*attention, kFlashBackwardFactor, 2.0)};
  ops.push_back(elementwise("attention.dq_copy.backward", 2.0 * tokens_ * q * act_bytes_, 0.0, layer));
  ops.push_back(elementwise("attention.dkv_accumulate.backward",
                            gathered + 3.0 * keys_read * tokens_ * (k + v) * act_bytes_, 0.0, layer));
  ops.push_back(elementwise("attention.dkv_reorder.backward", 2.0 * gathered, 0.0, layer));
  ops.push_back(context_collective("attention.dk_reduce_scatter.backward", net::CollectiveKind::kReduceScatter,
                                   gathered_k, layer));
  ops.push_back(context_collective("attention.dv_reduce_scatter.backward", net::CollectiveKind::kReduceScatter,
                                   gathered_v, layer));
  for (Op& op : ops) {
    op.work.backward = true;
    op.name = "layer" + std::to_string(layer) + "." + op.name;
  }
  return ops;
}

// A blocking collective over the context-parallel group, in the pass that emits it.
Op TransformerOps::context_collective(std::string name, net::CollectiveKind kind, double bytes, long long layer) {
  Op op;
  op.name = std::move(name);
  op.layer = layer;
  op.comm_marker = true;
  op.scope = CommScope::kContext;
  op.comm_forward = kind;
  op.comm_bytes = bytes;
  return op;
}

// Widths (elements per token on this tensor-parallel rank) of K and V as the
// attention stores them: query groups split t ways, never below one; under MLA,
// K of the query width and V of the output width.
double TransformerOps::attention_k_width() const {
  if (model_.multi_latent_attention) return static_cast<double>(model_.attention_qk_width()) / tp_;
  return kv_width_per_rank();
}
double TransformerOps::kv_width_per_rank() const {
  return std::max(static_cast<double>(model_.kv_width()) / tp_, static_cast<double>(model_.kv_channels));
}
double TransformerOps::attention_v_width() const {
  if (model_.multi_latent_attention) return static_cast<double>(model_.attention_v_width()) / tp_;
  return attention_k_width();
}

double TransformerOps::ring_kv_bytes() const {
  // The local s/c tokens' K and V (query groups split t ways, at least one).
  const double kv = kv_width_per_rank();
  return 2.0 * tokens_ * kv * act_bytes_;
}

}  // namespace trainsim::workload
