// TransformerOps: PyTorch's ring attention (torchtitan's context parallelism,
// torch.distributed.tensor.experimental.context_parallel; docs/model.md, "PyTorch's
// ring attention"): Transformer Engine's ring of c blocks, plus what PyTorch runs
// around them in PyTorch ops: each step's K and V concatenated before they are sent,
// each block's output merged into an fp32 running output (_SDPAMerger), and in the
// backward the gradients accumulated in fp32 and dK, dV sent around the ring in fp32.
#include <string>
#include <utility>
#include <vector>

#include "workload/transformer_ops.h"

namespace trainsim::workload {

namespace {
constexpr double kFp32 = 4.0;
// _SDPAMerger._merge_one in fp32, per output element: out - block_out (read two,
// write one: 12), times sigmoid(block_lse - lse) (read one, write one; the
// per-row statistics are small: 8), out minus that (12).
constexpr double kMergeBytes = 32.0;
// fp32 accumulation of a 16-bit gradient, grad += grad_ (read 4 and e, write 4).
double accumulate_bytes(double e) { return 2.0 * kFp32 + e; }
}  // namespace

// One ring step's K and V as PyTorch's ring holds them: torchtitan repeats the key and
// value heads to the query heads (repeat_kv) before scaled_dot_product_attention, so
// under GQA they are as wide as the queries, not the model's key-value groups.
double TransformerOps::torch_ring_kv_bytes() const {
  return tokens_ * static_cast<double>(model_.attention_qk_width() + model_.attention_v_width()) / tp_ * act_bytes_;
}

// A transfer to the ring neighbour beside the compute (the ring's step).
Op TransformerOps::torch_ring_step(std::string name, double bytes, long long layer) const {
  Op op = context_collective(std::move(name), net::CollectiveKind::kSendRecv, bytes, layer);
  op.overlapped = true;
  return op;
}

// Forward: K and V made contiguous (key.contiguous(), value.contiguous() on the heads-
// first views SDPA takes: a read and a write); then step i of c: (i < c - 1) K and V concatenated (torch.cat, a read and a
// write of the ring step's bytes, after the previous step's K and V arrived) and sent
// on; the block (flash attention of the local queries against that K, V chunk, a
// c-th of the work, as ring_attention_forward); its output cast to fp32 and, from the
// second block on, merged into the running output. After the last, the output cast
// back to 16 bits.
std::vector<Op> TransformerOps::torch_ring_attention_forward(const Op& attention, long long layer) const {
  const double out = tokens_ * static_cast<double>(model_.attention_v_width()) / tp_;  // output elements
  const double e = act_bytes_;
  const int blocks = static_cast<int>(cp_);
  const double kv_bytes = torch_ring_kv_bytes();
  std::vector<Op> ops{elementwise("attention.kv_contiguous", 2.0 * kv_bytes, 0.0, layer)};
  for (int i = 0; i < blocks; ++i) {
    const std::string n = std::to_string(i);
    if (i + 1 < blocks) {
      ops.push_back(elementwise("attention.kv_cat" + n, 2.0 * kv_bytes, 0.0, layer));
      ops.back().ring_waits = i > 0 ? 1 : 0;  // the K and V received last step
      ops.push_back(torch_ring_step("attention.ring_kv" + n, kv_bytes, layer));
    }
    Op block = attention;
    block.name = "attention.block" + n;
    block.work.flops /= cp_;
    block.model_flops /= cp_;
    block.ring_waits = i + 1 == blocks && i > 0 ? 1 : 0;  // the last K, V chunk (the others waited in their cat)
    ops.push_back(block);
    ops.push_back(elementwise("attention.merge" + n, out * ((e + kFp32) + (i > 0 ? kMergeBytes : 0.0)), 0.0, layer));
  }
  ops.push_back(elementwise("attention.out_cast", out * (kFp32 + e), 0.0, layer));
  for (Op& op : ops)
    if (op.work.kind == hw::KernelClass::kMemoryBound) op.has_backward = false;  // torch_ring_attention_backward's
  return ops;
}

// Backward (_templated_ring_attention_backward): dQ, dK, dV zero-filled in fp32, K and V
// made contiguous again; per
// step, K and V concatenated and sent on as forward, the block's flash backward, its
// dK, dV added to those received from the previous rank (fp32), concatenated
// (fp32: a read and a write of 4 bytes an element) and sent on in fp32, twice a
// 16-bit step's bytes, and its dQ added; after the last step dQ, and the dK, dV that
// came back home, cast to 16 bits.
std::vector<Op> TransformerOps::torch_ring_attention_backward(long long layer) const {
  const double q = tokens_ * static_cast<double>(model_.attention_qk_width()) / tp_;  // dQ elements
  const double kv_bytes = torch_ring_kv_bytes();
  const double kv = kv_bytes / act_bytes_;  // dK and dV elements
  const double e = act_bytes_;
  const std::vector<Op> fwd = attention_core_forward(layer);
  std::vector<Op> ops{elementwise("attention.grad_zero.backward", kFp32 * (q + kv), 0.0, layer),
                      elementwise("attention.kv_contiguous.backward", 2.0 * kv_bytes, 0.0, layer)};
  const int blocks = static_cast<int>(cp_);
  int block = 0;
  for (const Op& op : fwd) {
    if (op.work.kind != hw::KernelClass::kAttention || op.comm_marker) continue;
    const std::string n = std::to_string(block);
    if (block + 1 < blocks) {
      ops.push_back(elementwise("attention.kv_cat" + n + ".backward", 2.0 * kv_bytes, 0.0, layer));
      ops.back().ring_waits = block > 0 ? 1 : 0;
      ops.push_back(torch_ring_step("attention.ring_kv" + n + ".backward", kv_bytes, layer));
    }
    Op grad = backward_of(op, kFlashBackwardFactor, 2.0);
    grad.ring_waits = block + 1 == blocks && block > 0 ? 1 : 0;
    ops.push_back(grad);
    ops.push_back(elementwise("attention.dkv_accumulate" + n + ".backward", accumulate_bytes(e) * kv, 0.0, layer));
    ops.back().ring_waits = block > 0 ? 1 : 0;  // dK, dV of the previous step
    ops.push_back(elementwise("attention.dkv_cat" + n + ".backward", 2.0 * kFp32 * kv, 0.0, layer));
    ops.push_back(torch_ring_step("attention.ring_dkv" + n + ".backward", kFp32 * kv, layer));
    ops.push_back(elementwise("attention.dq_accumulate" + n + ".backward", accumulate_bytes(e) * q, 0.0, layer));
    ++block;
  }
  ops.push_back(elementwise("attention.dq_cast.backward", (kFp32 + e) * q, 0.0, layer));
  ops.push_back(elementwise("attention.dkv_cast.backward", (kFp32 + e) * kv, 0.0, layer));
  ops.back().ring_waits = 1;  // dK, dV home after the last step
  for (Op& op : ops) op.name = "layer" + std::to_string(layer) + "." + op.name;
  return ops;
}

}  // namespace trainsim::workload
