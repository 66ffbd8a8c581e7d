// torchtitan's Llama model code run eager (training.compile false; docs/model.md,
// "torchtitan's Llama eager"): the elementwise ops of its December 2024 block
// (torchtitan/models/llama/model.py and norms.py at 9dec370, the program
// scripts/pytorch-llama-step.py measured), each a kernel reading its inputs and
// writing its output once, in the activation type e except where the code casts
// to float. One trainsim op per module-level function: its forward bytes are the
// sum of the kernels its code launches, its backward bytes those of the kernels
// autograd runs for them (PyTorch tools/autograd/derivatives.yaml). The GEMMs and
// the attention are the fused list's; torch.compile fuses only these ops.
#include <string>
#include <utility>

#include "workload/transformer_ops.h"

namespace trainsim::workload {

namespace {
constexpr double kFloat = 4.0;  // the float the norm and the rotary embedding compute in
constexpr std::string_view kOther = "other";
}  // namespace

// RMSNorm.forward: y = x.float(); y * torch.rsqrt(y.pow(2).mean(-1, keepdim=True) + eps),
// then .type_as(x) * weight. Per element of x:
//   forward:  x.float() e + 4, pow 4 + 4, mean 4 (reads), y * r 4 + 4, type_as 4 + e,
//             * weight 2e: 4e + 28.
//   backward: * weight: grad * weight 2e, grad * normed 3e, its sum over the rows e (the
//             weight's gradient); type_as's cast back e + 4; y * r: grad * r 8, grad * y
//             12, its sum over the row 4; mean's expand / h 4; pow: self.pow(1) (a copy,
//             ATen's pow with exponent 1) 8, times 2 8, times grad 12; the sum of y's two
//             gradients 12; x.float()'s cast back 4 + e: 8e + 76.
// The per-row terms (the mean, + eps, rsqrt: 24 bytes a row forward) are left out: under
// 0.1% of a row of h elements. `users` linears read the output: the engine sums their
// input gradients before the norm's backward (3e an element each after the first, over
// all b s tokens: under tensor parallelism the sum precedes the reduce-scatter).
Op TransformerOps::llama_eager_norm(std::string name, double users, double params, long long layer) const {
  const double h = static_cast<double>(model_.hidden_size);
  const double e = act_bytes_;
  const double elements = tokens_ * h / sp_;
  Op op = elementwise(std::move(name), (4.0 * e + 28.0) * elements, params, layer, hw::KernelId::kNone);
  op.backward_bytes = (8.0 * e + 76.0) * elements + (users - 1.0) * 3.0 * e * tokens_ * h;
  op.kernel_class = kOther;
  return op;
}

// apply_rotary_emb on the rank's queries and keys, then repeat_kv on keys and values
// (grouped-query attention: each key/value head expanded to the query heads it serves).
//   rotary, per element: x.float() e + 4, the complex product with the table 4 + 4,
//             type_as 4 + e = 2e + 16; backward the same three: the cast, grad x
//             conj(table), the cast back (the table needs no gradient).
//   repeat_kv: expand + reshape copies kv to q channels per token: e (kv + q); backward,
//             the sum over the repeats reads q and writes kv channels: the same.
std::vector<Op> TransformerOps::llama_eager_attention_inputs(long long layer) const {
  const double e = act_bytes_;
  const double q = static_cast<double>(model_.query_width()) / tp_;
  const double kv = kv_width_per_rank();
  std::vector<Op> ops;
  const auto push = [&](std::string name, double bytes) {
    ops.push_back(elementwise(std::move(name), bytes, 0.0, layer, hw::KernelId::kNone));
    ops.back().backward_bytes = bytes;
    ops.back().kernel_class = kOther;
  };
  push("rotary_q", (2.0 * e + 2.0 * kFloat + 2.0 * kFloat) * tokens_ * q);
  push("rotary_k", (2.0 * e + 2.0 * kFloat + 2.0 * kFloat) * tokens_ * kv);
  if (kv < q) {
    push("repeat_k", e * (kv + q) * tokens_);
    push("repeat_v", e * (kv + q) * tokens_);
  }
  return ops;
}

// F.silu(w1(x)) * w3(x), per element of the rank's f channels: silu 2e, the product
// 3e; backward, the product's two gradients (grad x the other factor) 3e each and
// silu's backward reading grad and its input 3e.
Op TransformerOps::llama_eager_swiglu(long long layer) const {
  const double f = static_cast<double>(model_.ffn_hidden_size) / tp_;
  const double e = act_bytes_;
  Op op = elementwise("mlp_act", 5.0 * e * tokens_ * f, 0.0, layer, hw::KernelId::kNone);
  op.backward_bytes = 9.0 * e * tokens_ * f;
  op.kernel_class = kOther;
  return op;
}

// x + branch: 3e an element. Its backward launches nothing for the add; the
// engine sums the two gradients of the stream it forked from (the norm's and the
// residual's): 3e an element.
Op TransformerOps::llama_eager_residual(std::string name, long long layer) const {
  const double elements = tokens_ * static_cast<double>(model_.hidden_size) / sp_;
  Op op = elementwise(std::move(name), 3.0 * act_bytes_ * elements, 0.0, layer, hw::KernelId::kNone);
  op.backward_bytes = 3.0 * act_bytes_ * elements;
  op.kernel_class = kOther;
  return op;
}

}  // namespace trainsim::workload
