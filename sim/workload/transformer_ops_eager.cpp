// PyTorch eager's kernels for a GPT-2 training step (docs/model.md, "PyTorch
// eager"): the nn.Module of scripts/pytorch-gpt-step.py run under
// torch.autocast("cuda", torch.bfloat16) over fp32 parameters, SDPA attention
// and fused AdamW. One op per kernel the program launches; its bytes read each
// input once and write each output once, from the tensors' sizes and types.
//
// Where the kernels come from:
//  - autocast (https://pytorch.org/docs/stable/amp.html, "CUDA Ops that can
//    autocast to float16" / "... to float32"): linear runs in bf16, so its
//    fp32 input, weight and bias are cast first; a parameter's cast is cached
//    for the autocast region (one cast per step); layer_norm, log_softmax,
//    nll_loss and cross_entropy run in fp32; anything else (add, gelu) runs in
//    its inputs' promoted type, so fp32 + bf16 is fp32.
//  - autograd (tools/autograd/derivatives.yaml): addmm backward is an mm per
//    operand and the bias gradient grad.sum(0) (the engine reduces a broadcast
//    input's gradient to its shape); _to_copy backward casts the gradient back
//    to the source type; the engine casts a gradient to its input's type and
//    adds the gradients of a tensor used twice; split backward is a cat.
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

#include "workload/transformer_ops.h"

namespace trainsim::workload {

namespace {
constexpr double kBf16 = 2.0;   // autocast's lower precision
constexpr double kFp32 = 4.0;   // parameters, gradients, layer norm, loss, residual stream
constexpr double kIndex = 8.0;  // token ids are int64
// Per row, native_layer_norm saves the fp32 mean and reciprocal standard deviation.
constexpr double kNormStats = 2.0 * kFp32;
// A cast reads the source and writes the destination: fp32 <-> bf16.
constexpr double kCast = kFp32 + kBf16;
constexpr std::string_view kOther = "other";
constexpr std::string_view kEmbeddingClass = "embedding";
constexpr std::string_view kLoss = "softmax_cross_entropy";
}  // namespace

Op TransformerOps::eager_kernel(std::string name, double bytes, double params, long long layer,
                                hw::KernelId kernel, std::string_view kernel_class) const {
  Op op = elementwise(std::move(name), bytes, params, layer, kernel);
  op.kernel_class = kernel_class;
  return op;
}

std::vector<Op> TransformerOps::eager_embedding_forward() const {
  const double h = static_cast<double>(model_.hidden_size);
  const double T = tokens_;
  const double s = s_;
  using hw::KernelId;
  std::vector<Op> ops;
  // wte(idx): nn.Embedding is on no autocast list, so it gathers fp32 rows:
  // reads the int64 ids and T rows, writes T x h fp32.
  ops.push_back(eager_kernel("wte", T * kIndex + 2.0 * T * h * kFp32, 0.0, -1, KernelId::kEmbeddingForward,
                             kEmbeddingClass));
  // torch.arange(t): the position ids, written once.
  ops.push_back(eager_kernel("positions", s * kIndex, 0.0, -1, KernelId::kNone, kOther));
  // wpe(positions): s rows (the batch shares them).
  ops.push_back(eager_kernel("wpe", s * kIndex + 2.0 * s * h * kFp32, 0.0, -1, KernelId::kEmbeddingForward,
                             kEmbeddingClass));
  // Their sum broadcasts the s x h positions over the batch: fp32 residual stream.
  ops.push_back(eager_kernel("embedding_add", 2.0 * T * h * kFp32 + s * h * kFp32, 0.0, -1, KernelId::kTorchAdd,
                             kOther));
  return ops;
}

std::vector<Op> TransformerOps::eager_layer_forward(long long layer) const {
  const double h = static_cast<double>(model_.hidden_size);
  const double f = static_cast<double>(model_.ffn_hidden_size);
  const double qkv = static_cast<double>(model_.query_width() + 2 * model_.kv_width());
  const double T = tokens_;
  const bool bias = model_.add_bias_linear;
  using hw::KernelId;
  constexpr std::string_view other = kOther;
  std::vector<Op> ops;
  // F.layer_norm runs in fp32 under autocast: reads the fp32 stream and the
  // affine parameters, writes fp32 and the per-row statistics.
  const auto norm = [&](const std::string& name) {
    ops.push_back(eager_kernel(name, 2.0 * T * h * kFp32 + T * kNormStats + 2.0 * h * kFp32, 0.0, layer,
                               KernelId::kTorchLayernormForward, ""));
  };
  // nn.Linear under autocast: cast the fp32 input (if it is fp32), the weight and
  // the bias to bf16 (parameters once per autocast region, then cached), then
  // one cuBLASLt addmm with the bias in its epilogue (at::linear on a contiguous
  // 3-D input flattens to addmm).
  const auto linear = [&](const std::string& name, double in, double out, bool fp32_input) {
    if (fp32_input)
      ops.push_back(eager_kernel(name + ".input_cast", T * in * kCast, 0.0, layer, KernelId::kTorchCast, other));
    ops.push_back(eager_kernel(name + ".weight_cast", in * out * kCast, 0.0, layer, KernelId::kTorchCast, other));
    if (bias) ops.push_back(eager_kernel(name + ".bias_cast", out * kCast, 0.0, layer, KernelId::kTorchCast, other));
    ops.push_back(matmul(name, T, out, in, 0.0, layer));
  };
  // x + branch: fp32 + bf16 promotes to fp32; reads both, writes fp32.
  const auto residual = [&](const std::string& name) {
    ops.push_back(eager_kernel(name, T * h * (kFp32 + kBf16 + kFp32), 0.0, layer, KernelId::kTorchAdd, other));
  };
  norm("input_norm");
  linear("qkv_proj", h, qkv, true);
  // SDPA on the views of the qkv output: cuDNN reads strided q, k, v and writes
  // its output in the query's layout (alloc_with_matching_layout), so
  // y.transpose(1, 2).contiguous() copies nothing. It is PyTorch's kernel, not
  // ours: a profile prices it from its sdpa_* rows (our flash kernel's stand in).
  for (Op& op : attention_core_forward(layer)) {
    op.work.kernel = hw::KernelId::kSdpaForward;
    ops.push_back(std::move(op));
  }
  linear("attn_out_proj", h, h, false);
  residual("attn_residual");
  norm("post_attn_norm");
  linear("mlp_up", h, f, true);
  // F.gelu(approximate="tanh") is on no autocast list: bf16 in, bf16 out.
  ops.push_back(eager_kernel("mlp_act", 2.0 * T * f * kBf16, 0.0, layer, KernelId::kTorchGeluForward, ""));
  linear("mlp_down", f, h, false);
  residual("mlp_residual");
  for (Op& op : ops) op.name = "layer" + std::to_string(layer) + "." + op.name;
  return ops;
}

std::vector<Op> TransformerOps::eager_layer_backward(long long layer) const {
  const double h = static_cast<double>(model_.hidden_size);
  const double f = static_cast<double>(model_.ffn_hidden_size);
  const double qkv = static_cast<double>(model_.query_width() + 2 * model_.kv_width());
  const double T = tokens_;
  const bool bias = model_.add_bias_linear;
  using hw::KernelId;
  constexpr std::string_view other = kOther;
  std::vector<Op> fwd = eager_layer_forward(layer);
  const auto forward_op = [&](std::string_view suffix) -> const Op& {
    const std::string name = "layer" + std::to_string(layer) + "." + std::string(suffix);
    for (const Op& op : fwd)
      if (op.name == name) return op;
    throw std::logic_error("no forward op " + name);
  };
  std::vector<Op> ops;
  // The residual add's gradient reaches the bf16 branch through the engine's
  // cast to the input's type (fp32 -> bf16); the fp32 side passes it through.
  const auto residual = [&](const std::string& name) {
    ops.push_back(eager_kernel(name + ".backward", T * h * kCast, 0.0, layer, KernelId::kTorchCast, other));
  };
  // addmm backward: grad.sum(0) for the bias (bf16 reduction over the T rows),
  // the bias cast's backward (bf16 -> fp32, the parameter's gradient), two mm
  // (data and weight gradients, in bf16), the weight cast's backward.
  const auto linear = [&](const std::string& name, double in, double out, bool fp32_input) {
    if (bias) {
      ops.push_back(eager_kernel(name + ".bias_grad", T * out * kBf16 + out * kBf16, 0.0, layer,
                                 KernelId::kTorchSumRows, other));
      ops.push_back(eager_kernel(name + ".bias_cast.backward", out * kCast, out, layer, KernelId::kTorchCast, other));
    }
    ops.push_back(backward_of(forward_op(name), 2.0, 2.0));
    ops.push_back(eager_kernel(name + ".weight_cast.backward", in * out * kCast, in * out, layer, KernelId::kTorchCast,
                               other));
    // The input cast's backward: the bf16 data gradient to the fp32 norm output.
    if (fp32_input)
      ops.push_back(
          eager_kernel(name + ".input_cast.backward", T * in * kCast, 0.0, layer, KernelId::kTorchCast, other));
  };
  // native_layer_norm_backward: one kernel for the input gradient (reads dy, x,
  // the statistics and gamma; writes dx), one for gamma and beta (reads dy, x
  // and the statistics; writes both gradients). PyTorch names the second
  // GammaBetaBackward..., without "layer_norm": a profiler files it as other.
  // Then the engine adds the two gradients of the block input that fed both
  // the norm and the residual (fp32: reads two, writes one).
  const auto norm = [&](const std::string& name, const std::string& fork) {
    ops.push_back(eager_kernel(name + ".backward", 3.0 * T * h * kFp32 + T * kNormStats + h * kFp32, 0.0, layer,
                               KernelId::kTorchLayernormBackward, ""));
    ops.push_back(eager_kernel(name + ".gamma_beta.backward", 2.0 * T * h * kFp32 + T * kNormStats + 2.0 * h * kFp32,
                               2.0 * h, layer, KernelId::kTorchLayernormBackward, other));
    ops.push_back(eager_kernel(fork, 3.0 * T * h * kFp32, 0.0, layer, KernelId::kTorchAdd, other));
  };
  residual("mlp_residual");
  linear("mlp_down", f, h, false);
  // gelu_backward: reads dy and x, writes dx, all bf16.
  ops.push_back(eager_kernel("mlp_act.backward", 3.0 * T * f * kBf16, 0.0, layer, KernelId::kTorchGeluBackward, ""));
  linear("mlp_up", h, f, true);
  norm("post_attn_norm", "attn_fork.backward");
  residual("attn_residual");
  linear("attn_out_proj", h, h, false);
  for (const Op& op : fwd)
    if (op.work.kind == hw::KernelClass::kAttention) ops.push_back(backward_of(op, kFlashBackwardFactor, 2.0));
  // split(h, dim=2) backward: cat of dq, dk, dv (bf16) into the qkv gradient.
  ops.push_back(eager_kernel("qkv_split.backward", 2.0 * T * qkv * kBf16, 0.0, layer, KernelId::kTorchCat, other));
  linear("qkv_proj", h, qkv, true);
  norm("input_norm", "input_fork.backward");
  for (Op& op : ops)
    if (op.name.rfind("layer", 0) != 0) op.name = "layer" + std::to_string(layer) + "." + op.name;
  return ops;
}

std::vector<Op> TransformerOps::eager_head_forward() const {
  const double h = static_cast<double>(model_.hidden_size);
  const double v = static_cast<double>(model_.vocab_size);
  const double T = tokens_;
  using hw::KernelId;
  constexpr std::string_view other = kOther;
  std::vector<Op> ops;
  ops.push_back(eager_kernel("final_norm", 2.0 * T * h * kFp32 + T * kNormStats + 2.0 * h * kFp32, 0.0, -1,
                             KernelId::kTorchLayernormForward, ""));
  // lm_head (no bias): casts of the fp32 norm output and of the (tied) weight.
  ops.push_back(eager_kernel("output_layer.input_cast", T * h * kCast, 0.0, -1, KernelId::kTorchCast, other));
  ops.push_back(eager_kernel("output_layer.weight_cast", v * h * kCast, 0.0, -1, KernelId::kTorchCast, other));
  ops.push_back(matmul("output_layer", T, v, h, 0.0, -1));
  // logits.float(): bf16 -> fp32.
  ops.push_back(eager_kernel("logits_float", T * v * kCast, 0.0, -1, KernelId::kTorchCast, other));
  // F.cross_entropy = log_softmax + nll_loss, both fp32: log_softmax reads and
  // writes T x V; nll_loss reads the ids and one log-probability per row and
  // writes the loss and the total weight.
  ops.push_back(eager_kernel("log_softmax", 2.0 * T * v * kFp32, 0.0, -1, KernelId::kTorchLogSoftmaxForward, ""));
  ops.push_back(eager_kernel("nll_loss", T * (kIndex + kFp32) + 2.0 * kFp32, 0.0, -1, KernelId::kNone,
                             kLoss));
  return ops;
}

std::vector<Op> TransformerOps::eager_head_backward() const {
  const double h = static_cast<double>(model_.hidden_size);
  const double v = static_cast<double>(model_.vocab_size);
  const double T = tokens_;
  using hw::KernelId;
  constexpr std::string_view other = kOther;
  const std::vector<Op> fwd = eager_head_forward();
  std::vector<Op> ops;
  // loss.backward() seeds the fp32 scalar gradient with ones_like.
  ops.push_back(eager_kernel("loss_seed", kFp32, 0.0, -1, KernelId::kNone, other));
  // nll_loss_backward: zeros_like(log-probabilities) (T x V fp32), then one
  // write per row at its target.
  ops.push_back(eager_kernel("nll_loss.zero_grad", T * v * kFp32, 0.0, -1, KernelId::kTorchFill, other));
  ops.push_back(eager_kernel("nll_loss.backward", T * (kIndex + kFp32) + kFp32, 0.0, -1, KernelId::kNone,
                             kLoss));
  // _log_softmax_backward_data: reads the gradient and the saved output, writes dx.
  ops.push_back(eager_kernel("log_softmax.backward", 3.0 * T * v * kFp32, 0.0, -1, KernelId::kTorchLogSoftmaxBackward,
                             ""));
  // .float() backward: fp32 -> bf16.
  ops.push_back(eager_kernel("logits_float.backward", T * v * kCast, 0.0, -1, KernelId::kTorchCast, other));
  ops.push_back(backward_of(fwd[3], 2.0, 2.0));
  // The weight cast's backward: the bf16 weight gradient to fp32. Untied, that
  // completes lm_head's gradient; tied, the embedding's backward adds the rest.
  ops.push_back(eager_kernel("output_layer.weight_cast.backward", v * h * kCast,
                             model_.untie_embeddings ? v * h : 0.0, -1, KernelId::kTorchCast, other));
  ops.push_back(eager_kernel("output_layer.input_cast.backward", T * h * kCast, 0.0, -1, KernelId::kTorchCast, other));
  ops.push_back(eager_kernel("final_norm.backward", 3.0 * T * h * kFp32 + T * kNormStats + h * kFp32, 0.0, -1,
                             KernelId::kTorchLayernormBackward, ""));
  ops.push_back(eager_kernel("final_norm.gamma_beta.backward", 2.0 * T * h * kFp32 + T * kNormStats + 2.0 * h * kFp32,
                             2.0 * h, -1, KernelId::kTorchLayernormBackward, other));
  return ops;
}

std::vector<Op> TransformerOps::eager_embedding_backward() const {
  const double h = static_cast<double>(model_.hidden_size);
  const double v = static_cast<double>(model_.vocab_size);
  const double p = static_cast<double>(model_.max_position_embeddings);
  const double T = tokens_;
  const double s = s_;
  using hw::KernelId;
  constexpr std::string_view other = kOther;
  std::vector<Op> ops;
  // The broadcast add's gradient for the positions: summed over the batch.
  ops.push_back(eager_kernel("wpe.batch_sum", T * h * kFp32 + s * h * kFp32, 0.0, -1, KernelId::kTorchSumRows, other));
  // embedding_dense_backward with at most 3072 ids: zeros for the P x h
  // gradient, then embedding_backward_feature_kernel adds each row.
  ops.push_back(eager_kernel("wpe.zero_grad", p * h * kFp32, 0.0, -1, KernelId::kTorchFill, other));
  ops.push_back(eager_kernel("wpe.backward", s * kIndex + 2.0 * s * h * kFp32, p * h, -1,
                             KernelId::kEmbeddingBackward, kEmbeddingClass));
  // More than 3072 ids: the sort-based path. Zeros for the V x h gradient; a
  // radix sort of the ids with their positions (read and write both, int64);
  // per-segment sums of the incoming rows; the segments scattered into the
  // gradient's rows (at most T distinct rows).
  ops.push_back(eager_kernel("wte.zero_grad", v * h * kFp32, 0.0, -1, KernelId::kTorchFill, other));
  ops.push_back(eager_kernel("wte.sort", 4.0 * T * kIndex, 0.0, -1, KernelId::kNone, other));
  ops.push_back(eager_kernel("wte.segment_sum", T * kIndex + 2.0 * T * h * kFp32, 0.0, -1, KernelId::kNone, other));
  ops.push_back(eager_kernel("wte.scatter", 2.0 * T * h * kFp32, model_.untie_embeddings ? v * h : 0.0, -1,
                             KernelId::kNone, other));
  // Tied: the engine adds lm_head's and the embedding's gradients of the one
  // weight (fp32: reads two, writes one).
  if (!model_.untie_embeddings)
    ops.push_back(eager_kernel("wte.tied_sum", 3.0 * v * h * kFp32, v * h, -1, KernelId::kTorchAdd, other));
  return ops;
}

Op TransformerOps::fsdp_copy(std::string name, double bytes, long long layer, hw::HostPass pass) const {
  // foreach_all_gather_copy_out (torch.split_with_sizes_copy: the gathered flat
  // buffer into the unit's unsharded parameters) and foreach_reduce_scatter_copy_in
  // (torch._chunk_cat: the unit's gradients into the reduce-scatter input) each read
  // and write every element of the unit once: batched copies, cat's kernel.
  Op op = eager_kernel(std::move(name), bytes, 0.0, layer, hw::KernelId::kTorchCat, kOther);
  if (eager()) op.work.host_pass = pass;  // issued by the host (CUDA graphs are one GPU's only)
  return op;
}

Op TransformerOps::eager_optimizer_step(double params) const {
  // torch.optim.AdamW(fused=True): one multi-tensor kernel reads the fp32
  // gradient, parameter, exp_avg and exp_avg_sq and writes the last three.
  return elementwise("optimizer_step", params * 7.0 * kFp32, 0.0, -1, hw::KernelId::kTorchAdamw);
}

}  // namespace trainsim::workload
