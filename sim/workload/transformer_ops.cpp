#include "workload/transformer_ops.h"

#include <algorithm>
#include <array>
#include <optional>
#include <stdexcept>
#include <utility>

#include "workload/op_sac.h"
#include "workload/parameters.h"

namespace trainsim::workload {

namespace {
constexpr double kMaskBytes = 1.0;   // dropout masks are stored as bytes
constexpr double kFp32Bytes = 4.0;   // softmax statistics and loss in fp32
constexpr double kTokenIdBytes = 4.0;  // a target token id (int32)
// Causal attention computes half of the s x s score matrix when the kernel skips
// masked blocks (flash); model FLOPs still count the full matrix (Megatron-LM).
constexpr double kCausalFraction = 0.5;

// The measured kernel that runs an op's backward pass (docs/model.md, "Calibrated
// costs"). The residual add's backward passes the gradient through to both
// branches: no kernel of ours does it, so it keeps the roofline's 2 x bytes.
// The fused softmax-cross-entropy kernel writes the logits' gradient in the same
// pass as the loss; its measured rate prices both ops.
hw::KernelId backward_kernel(hw::KernelId forward) {
  switch (forward) {
    case hw::KernelId::kEmbeddingForward: return hw::KernelId::kEmbeddingBackward;
    case hw::KernelId::kLayernormForward: return hw::KernelId::kLayernormBackward;
    case hw::KernelId::kGeluForward: return hw::KernelId::kGeluBackward;
    case hw::KernelId::kAttentionForward: return hw::KernelId::kAttentionBackward;
    case hw::KernelId::kSdpaForward: return hw::KernelId::kSdpaBackward;
    case hw::KernelId::kSoftmaxCrossEntropy: return hw::KernelId::kSoftmaxCrossEntropy;
    case hw::KernelId::kTorchLogSoftmaxForward: return hw::KernelId::kTorchLogSoftmaxBackward;
    case hw::KernelId::kMoePermute: return hw::KernelId::kMoeUnpermute;
    case hw::KernelId::kMoeUnpermute: return hw::KernelId::kMoePermute;
    default: return hw::KernelId::kNone;
  }
}
// PyTorch eager issues every kernel from its host thread (docs/model.md, "Host
// dispatch"), or, captured as one CUDA graph, from none (kGraph); the fused step's
// kernels are not marked (no host model).
std::vector<Op> host_dispatched(std::vector<Op> ops, hw::HostPass pass, bool cuda_graph) {
  for (Op& op : ops) op.work.host_pass = cuda_graph ? hw::HostPass::kGraph : pass;
  return ops;
}
}  // namespace

TransformerOps::TransformerOps(const ModelConfig& model, const TrainingConfig& training, long long micro_batch,
                               int tensor, bool sequence_parallel, int context, int expert, bool folded_experts,
                               ContextComm context_comm, TpOverlap tp_overlap, bool sharded_gradients,
                               bool shared_expert_overlap)
    : model_(model),
      training_(training),
      b_(static_cast<double>(micro_batch)),
      s_(static_cast<double>(model.seq_length) / std::max(1, context)),
      tokens_(b_ * s_),
      tp_(static_cast<double>(tensor)),
      sp_(sequence_parallel ? static_cast<double>(tensor) : 1.0),
      cp_(static_cast<double>(context)),
      ep_(static_cast<double>(expert)),
      etp_(folded_experts ? 1.0 : static_cast<double>(tensor)),
      context_comm_(context > 1 ? context_comm : ContextComm::kP2p),
      tp_overlap_(tp_overlap),
      sharded_gradients_(sharded_gradients),
      shared_overlap_(shared_expert_overlap && model.has_shared_expert()) {
  if (shared_expert_overlap && !model.has_shared_expert())
    throw std::invalid_argument("moe_shared_expert_overlap needs shared experts (moe_shared_expert_intermediate_size)");
  if (shared_expert_overlap && tp_overlap != TpOverlap::kNone)
    throw std::invalid_argument("moe_shared_expert_overlap with tensor-parallel communication overlap is not modeled");
  if (tp_overlap != TpOverlap::kNone && (tensor < 2 || !sequence_parallel))
    throw std::invalid_argument("tensor-parallel overlap needs tensor parallelism with sequence parallelism");
  if (micro_batch < 1 || model.seq_length < 1) throw std::invalid_argument("micro-batch and sequence must be positive");
  if (tensor < 1 || context < 1 || expert < 1) throw std::invalid_argument("parallel sizes must be positive");
  if (model.seq_length % context != 0)
    throw std::invalid_argument("context-parallel size must divide the sequence length");
  if (context > 1 && !is_flash(training.attention_backend))
    throw std::invalid_argument("context parallelism runs ring attention on the flash backend only");
  if (expert > 1 && (!model.is_moe() || model.num_experts % expert != 0))
    throw std::invalid_argument("expert-parallel size must divide the number of experts");
  if (model.is_moe() && tensor > 1 && !sequence_parallel)
    throw std::invalid_argument("MoE with tensor parallelism needs sequence parallelism (as Megatron-LM)");
  if (training.framework != Framework::kFused) {
    // The programs docs/model.md "PyTorch eager" and "trainsim-train" list, and nothing
    // else: bf16 with fp32 gradients, fused attention, AdamW, a GPT-2 block (LayerNorm,
    // biased linears, GELU, learned positions, multi-head attention, no dropout), no
    // model parallelism (trainsim-train runs data-parallel replicas, PyTorch eager one GPU).
    const std::string what = training.framework == Framework::kPytorchEager ? "the PyTorch eager op list"
                                                                            : "the trainsim-train op list";
    if (tensor != 1 || context != 1 || expert != 1 || sequence_parallel)
      throw std::invalid_argument(what + " has no model parallelism");
    if (training.precision != hw::Precision::kBf16 || training.grad_reduce_dtype != hw::Precision::kFp32 ||
        training.attention_backend != AttentionBackend::kFlash || training.optimizer != Optimizer::kAdam)
      throw std::invalid_argument(what + " is bf16 with fp32 gradients, fused attention and AdamW");
    if (model.is_moe() || model.swiglu || model.squared_relu || model.normalization != Normalization::kLayerNorm ||
        model.position_embedding != PositionEmbedding::kLearnedAbsolute ||
        model.num_query_groups != model.num_attention_heads || model.hidden_dropout > 0.0 ||
        model.attention_dropout > 0.0)
      throw std::invalid_argument(what + " is a GPT-2 block: dense GELU MLP, LayerNorm, learned positions, "
                                         "multi-head attention, no dropout");
  }
  act_bytes_ = activation_element_bytes(training);
  // An fp8 or fp4 recipe's GEMM operands: 1 byte, or NVFP4's 0.5625 (MXFP4's 0.53125) with its scales.
  gemm_bytes_ = hw::quantized_gemms(training.precision) ? quantized_element_bytes(training) : act_bytes_;
}

Op TransformerOps::matmul(std::string name, double m, double n, double k, double params, long long layer,
                          int count) const {
  Op op;
  op.name = std::move(name);
  op.work.kind = hw::KernelClass::kMatmul;
  op.work.flops = 2.0 * m * n * k * count;
  op.work.bytes = (m * k + k * n + m * n) * gemm_bytes_ * count;
  op.work.count = count;
  op.work.m = m;
  op.work.n = n;
  op.work.k = k;
  op.model_flops = op.work.flops;
  op.grad_params = params;
  op.layer = layer;
  // first_last_layers_bf16: the layer's GEMMs run in bf16, operands included.
  if (layer >= 0 && (layer < training_.bf16_first_layers || layer >= model_.num_layers - training_.bf16_last_layers))
    keep_16_bit(op);
  return op;
}

void TransformerOps::keep_16_bit(Op& gemm) const {
  const hw::KernelWork& w = gemm.work;
  gemm.work.fp8 = false;
  gemm.work.bytes = (w.m * w.k + w.k * w.n + w.m * w.n) * act_bytes_ * w.count;
}

Op TransformerOps::elementwise(std::string name, double bytes, double params, long long layer,
                               hw::KernelId kernel) const {
  Op op;
  op.name = std::move(name);
  op.work.kind = hw::KernelClass::kMemoryBound;
  op.work.bytes = bytes;
  op.work.kernel = kernel;
  op.grad_params = params;
  op.layer = layer;
  return op;
}

// Transformer Engine's quantization around one fp8 GEMM (docs/model.md, "FP8
// recipes"): forward, the input is cast to fp8 in the row-wise layout and its
// transpose (the weight gradient's operand) by one cast-transpose kernel, reading
// e and writing 2 fp8 bytes per element, unless a LayerNormLinear's norm wrote
// the fp8 input itself (then only the transpose's byte is extra); backward, the
// output gradient is cast-transposed the same way. An fp4 recipe the same with
// NVFP4's g = 0.5625 bytes per element ("FP4 recipes"). Nothing outside a quantized
// recipe or for a GEMM that stays in 16 bits.
//
// Per-tensor current scaling (fp8_recipe "tensorwise") must know a tensor's amax
// before it casts it (Float8CurrentScalingQuantizer::quantize_impl: compute_amax,
// then the scale, then the cast): a Linear's input and every output gradient are
// read once more (e bytes an element); a LayerNormLinear's norm computes the amax
// as it writes its 16-bit output, which the cast then reads and writes as fp8 and
// its transpose (e + 2 bytes, the norm cannot write fp8 with a scale it does not
// know yet).
std::optional<Op> TransformerOps::fp8_cast(const Op& gemm, bool input_from_norm) const {
  if (!hw::quantized_gemms(training_.precision) || !gemm.work.fp8 || gemm.work.kind != hw::KernelClass::kMatmul)
    return std::nullopt;
  const double rows = gemm.work.m * gemm.work.count;
  const double cast_transpose = act_bytes_ + 2.0 * gemm_bytes_;
  const bool current_scaling =
      training_.precision == hw::Precision::kFp8 && training_.fp8_recipe == Fp8Recipe::kTensorwise;
  const double amax = current_scaling ? act_bytes_ : 0.0;
  const double forward = input_from_norm ? (current_scaling ? cast_transpose : gemm_bytes_) : cast_transpose + amax;
  const std::string suffix = training_.precision == hw::Precision::kFp4 ? ".fp4_cast" : ".fp8_cast";
  Op op = elementwise(gemm.name + suffix, rows * gemm.work.k * forward, 0.0, gemm.layer,
                      hw::KernelId::kFp8CastTranspose);
  op.backward_bytes = rows * gemm.work.n * (cast_transpose + amax);
  return op;
}

void TransformerOps::push_gemm(std::vector<Op>& ops, Op gemm, bool input_from_norm) const {
  if (std::optional<Op> cast = fp8_cast(gemm, input_from_norm)) ops.push_back(std::move(*cast));
  ops.push_back(std::move(gemm));
}

// The MLP activation's measured kernel: GELU's; SwiGLU and squared ReLU have none
// of their own (roofline).
hw::KernelId TransformerOps::activation_kernel() const {
  return model_.swiglu || model_.squared_relu ? hw::KernelId::kNone : hw::KernelId::kGeluForward;
}

Op TransformerOps::tp_enter(std::string name, long long layer) const {
  Op op;
  op.name = std::move(name);
  op.layer = layer;
  op.comm_marker = true;
  op.comm_bytes = tokens_ * static_cast<double>(model_.hidden_size) * act_bytes_;
  op.column_input = true;
  if (tp_ > 1.0) {
    // f: identity forward, all-reduce of the input gradient backward; with SP an
    // all-gather of the sequence shards forward and a reduce-scatter backward.
    if (sp_ > 1.0) op.comm_forward = net::CollectiveKind::kAllGather;
    op.comm_backward = sp_ > 1.0 ? net::CollectiveKind::kReduceScatter : net::CollectiveKind::kAllReduce;
  }
  return op;
}

Op TransformerOps::tp_exit(std::string name, long long layer) const {
  Op op = tp_enter(std::move(name), layer);
  op.column_input = false;
  // g: all-reduce forward, identity backward; with SP a reduce-scatter forward
  // and an all-gather backward.
  op.comm_forward.reset();
  op.comm_backward.reset();
  if (tp_ > 1.0) {
    op.comm_forward = sp_ > 1.0 ? net::CollectiveKind::kReduceScatter : net::CollectiveKind::kAllReduce;
    if (sp_ > 1.0) op.comm_backward = net::CollectiveKind::kAllGather;
  }
  return op;
}

// Matmul backward = data gradient + weight gradient, each as large as the forward
// GEMM (work.backward tells a profile to look up both shapes); elementwise
// backward reads the saved input and the incoming gradient, unless the op says
// what its backward kernels move (Op::backward_bytes).
Op TransformerOps::backward_of(const Op& fwd, double flops_factor, double bytes_factor) {
  Op op = fwd;
  op.name = fwd.name + ".backward";
  std::swap(op.comm_forward, op.comm_backward);  // a marker's backward collective runs now
  if (fwd.backward_comm_bytes) op.comm_bytes = *fwd.backward_comm_bytes;
  op.backward_comm_bytes.reset();
  op.work.flops *= flops_factor;
  op.work.bytes = fwd.backward_bytes ? *fwd.backward_bytes : fwd.work.bytes * bytes_factor;
  op.backward_bytes.reset();
  op.work.backward = true;
  op.work.kernel = backward_kernel(fwd.work.kernel);
  op.model_flops = fwd.model_flops * 2.0;
  return op;
}

std::vector<Op> TransformerOps::embedding_forward() const {
  if (eager()) return host_dispatched(eager_embedding_forward(), hw::HostPass::kForward, training_.cuda_graph);
  const double h = static_cast<double>(model_.hidden_size);
  // Vocabulary-parallel under TP: each rank looks up the tokens of its shard and
  // writes the full b s h (zeros elsewhere); g then sums (or scatters) the shards.
  double bytes = 2.0 * tokens_ * h * act_bytes_;  // gather rows, write the sum
  if (model_.position_embedding == PositionEmbedding::kLearnedAbsolute) bytes += tokens_ * h * act_bytes_;
  if (model_.hidden_dropout > 0.0) bytes += tokens_ * h * kMaskBytes / sp_;
  const double params = static_cast<double>(model_.vocab_size) * h / tp_ +
                        (model_.position_embedding == PositionEmbedding::kLearnedAbsolute
                             ? static_cast<double>(model_.max_position_embeddings) * h
                             : 0.0);
  std::vector<Op> ops{elementwise("embedding", bytes, params, -1, hw::KernelId::kEmbeddingForward)};
  if (tp_ > 1.0) ops.push_back(tp_exit("embedding.tp", -1));
  return ops;
}

std::vector<Op> TransformerOps::mla_projections(long long layer) const {
  // Megatron-Core's MLASelfAttention (docs/model.md, "Multi-head latent attention"):
  // the down projections run duplicated on every TP rank over its own tokens (T/t
  // with SP), their latents are gathered along the sequence (one all-gather), then
  // normalized and projected up, column-parallel, to the rank's a = H/t heads. The
  // down projections' and norms' weights are whole on every rank.
  const double h = static_cast<double>(model_.hidden_size);
  const double bias = model_.add_bias_linear ? 1.0 : 0.0;
  const double a = static_cast<double>(model_.num_attention_heads) / tp_;
  const double d_qk = static_cast<double>(model_.qk_head_dim);
  const double d_r = static_cast<double>(model_.qk_pos_emb_head_dim);
  const double d_v = static_cast<double>(model_.v_head_dim);
  const double q_lora = static_cast<double>(model_.q_lora_rank);
  const double kv_lora = static_cast<double>(model_.kv_lora_rank);
  const double local = tokens_ / sp_;
  std::vector<Op> ops;
  if (q_lora <= 0.0) {
    // Queries straight from h: a column-parallel projection of the gathered input,
    // and the KV down projection on the same gathered tokens.
    if (tp_ > 1.0) ops.push_back(tp_enter("attn_f", layer));
    push_gemm(ops, matmul("q_proj", tokens_, a * (d_qk + d_r), h, (h + bias) * a * (d_qk + d_r), layer), true);
    push_gemm(ops, matmul("kv_down_proj", tokens_, kv_lora + d_r, h, (h + bias) * (kv_lora + d_r), layer), true);
  } else {
    push_gemm(ops, matmul("q_down_proj", local, q_lora, h, (h + bias) * q_lora, layer), true);
    push_gemm(ops, matmul("kv_down_proj", local, kv_lora + d_r, h, (h + bias) * (kv_lora + d_r), layer), true);
    if (tp_ > 1.0) {
      Op gather = tp_enter("mla_latents_f", layer);
      gather.comm_bytes = tokens_ * (q_lora + kv_lora + d_r) * act_bytes_;
      ops.push_back(std::move(gather));
    }
  }
  if (model_.qk_layernorm) {
    // q_layernorm and kv_layernorm over the gathered latents (read and write each).
    ops.push_back(elementwise("latent_norms", 2.0 * tokens_ * (q_lora + kv_lora) * act_bytes_,
                              qk_norm_parameters(model_), layer, hw::KernelId::kLayernormForward));
  }
  if (q_lora > 0.0)
    push_gemm(ops, matmul("q_up_proj", tokens_, a * (d_qk + d_r), q_lora, (q_lora + bias) * a * (d_qk + d_r), layer),
              true);
  push_gemm(ops, matmul("kv_up_proj", tokens_, a * (d_qk + d_v), kv_lora, (kv_lora + bias) * a * (d_qk + d_v), layer),
            true);
  // Rotary embedding of the d_r parts and the concatenations into Q and K: read the
  // query, the keys' d_qk parts and the shared d_r part, write Q and K.
  ops.push_back(elementwise("mla_rope", tokens_ * (a * (d_qk + d_r) + a * d_qk + d_r + 2.0 * a * (d_qk + d_r)) *
                                            act_bytes_,
                            0.0, layer));
  return ops;
}

std::vector<Op> TransformerOps::attention_core_forward(long long layer) const {
  // Heads split t ways; query groups too, but never below one group per rank.
  // q: the width QK^T reads per query and key head (MLA: d_qk + d_r per head), out:
  // the width AV writes (MLA: d_v per head); kv: K and V as stored (MLA: K of q,
  // V of out).
  const bool mla = model_.multi_latent_attention;
  const double q = static_cast<double>(model_.attention_qk_width()) / tp_;
  const double out = static_cast<double>(model_.attention_v_width()) / tp_;
  const double kv = mla ? (q + out) / 2.0 : kv_width_per_rank();
  const double a = static_cast<double>(model_.num_attention_heads) / tp_;
  // The s/c local queries attend to all s keys (context parallelism; c = 1: s^2).
  const double full_flops = 2.0 * b_ * s_ * (s_ * cp_) * (q + out);  // QK^T and AV: 2 b s^2 q and 2 b s^2 out
  if (is_flash(training_.attention_backend)) {
    // Causal: half of the s^2 pairs run, the model FLOPs count all of them. A
    // sliding window runs its pairs (ModelConfig::window_pairs), and the model FLOPs
    // count twice as many, as for causal attention.
    const double fraction = model_.is_window_layer(layer) ? model_.window_pairs(s_) / (s_ * s_) : kCausalFraction;
    Op op;
    op.name = "attention";
    op.layer = layer;
    op.work.kind = hw::KernelClass::kAttention;
    op.work.kernel = hw::KernelId::kAttentionForward;
    if (training_.attention_backend == AttentionBackend::kFlash2)
      op.work.attention_kernel = hw::AttentionKernel::kFlash2;
    op.work.head_dim = static_cast<int>(mla ? model_.qk_head_dim + model_.qk_pos_emb_head_dim : model_.kv_channels);
    if (mla) op.work.value_head_dim = static_cast<int>(model_.v_head_dim);
    op.work.flops = full_flops * fraction;
    // Reads Q, K, V and writes O and the fp32 log-sum-exp per row.
    op.work.bytes = tokens_ * (q + out + 2.0 * kv) * act_bytes_ + b_ * a * s_ * kFp32Bytes;
    op.model_flops = full_flops * fraction / kCausalFraction;
    if (cp_ <= 1.0) return {op};
    if (context_comm_ == ContextComm::kAllGather) return all_gather_attention_forward(op, layer);
    if (context_comm_ == ContextComm::kAllToAll) return ulysses_attention_forward(op, q + 2.0 * kv, out, layer);
    if (context_comm_ == ContextComm::kTorchRing) return torch_ring_attention_forward(op, layer);
    return ring_attention_forward(op, layer);
  }
  // Unfused (Megatron-LM, SC'21): batched GEMMs per head plus a softmax kernel
  // over the b a s^2 scores, which are written to and read from HBM.
  const double heads = b_ * a;
  const double scores = heads * s_ * s_;
  const int count = static_cast<int>(heads);
  Op qk;
  qk.name = "attention.scores";
  qk.layer = layer;
  const double qk_flops = 2.0 * b_ * s_ * (s_ * cp_) * q;
  const double av_flops = full_flops - qk_flops;
  qk.work = {hw::KernelClass::kAttention, qk_flops, tokens_ * (q + kv) * act_bytes_ + scores * act_bytes_, count};
  qk.model_flops = qk_flops;
  Op softmax = elementwise("attention.softmax", scores * softmax_bytes_per_score(false), 0.0, layer);
  softmax.kernel_class = "attention";
  softmax.backward_bytes = scores * softmax_bytes_per_score(true);
  Op av;
  av.name = "attention.context";
  av.layer = layer;
  av.work = {hw::KernelClass::kAttention, av_flops, scores * act_bytes_ + tokens_ * (kv + out) * act_bytes_, count};
  av.model_flops = av_flops;
  return {qk, softmax, av};
}

std::vector<Op> TransformerOps::layer_forward(long long layer) const {
  if (eager()) return host_dispatched(eager_layer_forward(layer), hw::HostPass::kForward, training_.cuda_graph);
  if (tp_overlap_ != TpOverlap::kNone) return overlapped_forward(layer_forward_ops(layer));
  return layer_forward_ops(layer);
}

// A decoder layer's forward, each tensor-parallel collective a blocking marker.
std::vector<Op> TransformerOps::layer_forward_ops(long long layer) const {
  const double h = static_cast<double>(model_.hidden_size);
  // Column-parallel QKV and MLP-up, row-parallel attention-out and MLP-down:
  // output (resp. input) widths split t ways (Shoeybi et al. 2019).
  const double f = static_cast<double>(model_.ffn_hidden_size) / tp_;
  const double q = static_cast<double>(model_.query_width()) / tp_;
  const double kv = kv_width_per_rank();
  const double bias = model_.add_bias_linear ? 1.0 : 0.0;
  const double norm_params = model_.normalization == Normalization::kLayerNorm ? 2.0 * h : h;
  // Norms, dropouts and residuals are replicated on the t ranks, or split along
  // the sequence with SP (Korthikanti et al. 2022).
  const double norm_bytes = 2.0 * tokens_ * h * act_bytes_ / sp_;
  // Bias-dropout-add: read the branch and the residual, write the sum (+ mask).
  const double residual_bytes =
      (3.0 * tokens_ * h * act_bytes_ + (model_.hidden_dropout > 0.0 ? tokens_ * h * kMaskBytes : 0.0)) / sp_;

  std::vector<Op> ops;
  // LayerNorm and RMSNorm alike take the measured layernorm kernel's bandwidth:
  // both read and write t h elements once.
  constexpr hw::KernelId kNorm = hw::KernelId::kLayernormForward;
  constexpr hw::KernelId kResidual = hw::KernelId::kResidualForward;
  // SwiGLU's gate x up has no measured kernel of its own (roofline).
  const hw::KernelId activation = activation_kernel();
  const bool eager = llama_eager();
  ops.push_back(eager ? llama_eager_norm("input_norm", 3.0, norm_params, layer)  // read by wq, wk, wv
                      : elementwise("input_norm", norm_bytes, norm_params, layer, kNorm));
  if (model_.multi_latent_attention) {
    for (Op& op : mla_projections(layer)) ops.push_back(std::move(op));
  } else {
    if (tp_ > 1.0) ops.push_back(tp_enter("attn_f", layer));
    push_gemm(ops, matmul("qkv_proj", tokens_, q + 2.0 * kv, h, h * (q + 2.0 * kv) + bias * (q + 2.0 * kv), layer),
              true);
    if (eager)
      for (Op& op : llama_eager_attention_inputs(layer)) ops.push_back(std::move(op));
  }
  if (model_.qk_layernorm && !model_.multi_latent_attention) {
    // One norm kernel over the rank's query and key heads: reads and writes their
    // t (q + kv) elements (inside the TP region: split by t, not by SP).
    ops.push_back(elementwise("qk_norm", 2.0 * tokens_ * (q + kv) * act_bytes_, qk_norm_parameters(model_), layer,
                              kNorm));
  }
  if (std::optional<Op> rope = rotary_embedding(layer)) ops.push_back(std::move(*rope));
  for (Op& op : trainsim_train() ? trainer_attention_forward(layer) : attention_core_forward(layer))
    ops.push_back(std::move(op));
  const double out = static_cast<double>(model_.attention_v_width()) / tp_;  // q without MLA
  push_gemm(ops, matmul("attn_out_proj", tokens_, h, out, out * h + bias * h, layer), false);
  if (tp_ > 1.0) ops.push_back(tp_exit("attn_g", layer));
  if (eager) {
    ops.push_back(llama_eager_residual("attn_residual", layer));
    ops.push_back(llama_eager_norm("post_attn_norm", 2.0, norm_params, layer));  // read by w1, w3
  } else {
    ops.push_back(elementwise("attn_residual", residual_bytes, 0.0, layer, kResidual));
    ops.back().kernel_class = "residual";  // its backward too, which no kernel of ours runs
    ops.push_back(elementwise("post_attn_norm", norm_bytes, norm_params, layer, kNorm));
  }
  if (!model_.is_moe_layer(layer)) {
    const double up = model_.swiglu ? 2.0 * f : f;
    // GELU reads f and writes f; SwiGLU reads gate and up (2f) and writes f.
    const double act_bytes = (up + f) * tokens_ * act_bytes_;
    if (tp_ > 1.0) ops.push_back(tp_enter("mlp_f", layer));
    push_gemm(ops, matmul("mlp_up", tokens_, up, h, h * up + bias * up, layer), true);
    if (eager) {
      ops.push_back(llama_eager_swiglu(layer));
    } else if (!training_.bias_activation_fusion) {
      ops.push_back(unfused_swiglu(layer));
    } else {
      ops.push_back(elementwise("mlp_act", act_bytes, 0.0, layer, activation));
      ops.back().kernel_class = "gelu";  // SwiGLU too, which no kernel of ours runs
    }
    push_gemm(ops, matmul("mlp_down", tokens_, h, f, f * h + bias * h, layer), false);
    if (tp_ > 1.0) ops.push_back(tp_exit("mlp_g", layer));
  } else {
    for (Op& op : moe_forward(layer)) ops.push_back(std::move(op));
  }
  if (eager) {
    ops.push_back(llama_eager_residual("mlp_residual", layer));
  } else {
    ops.push_back(elementwise("mlp_residual", residual_bytes, 0.0, layer, kResidual));
    ops.back().kernel_class = "residual";
  }
  fp8_gathered_inputs(ops);
  for (Op& op : ops) op.name = "layer" + std::to_string(layer) + "." + op.name;
  return ops;
}

// Rotary embeddings of the rank's query and key heads, e bytes an element, forward and
// backward alike (docs/model.md, "Forward, per layer"):
//   fused (apply_rope_fusion, Transformer Engine's fused_apply_rotary_pos_emb, or the one
//          kernel torch.compile makes of the rotary arithmetic): read t, write t; the
//          backward reads the gradient and writes it (2e).
//   unfused (the rotate-half PyTorch ops, Megatron-Core's _apply_rotary_pos_emb_bshd and
//          Aleph Alpha's Scaling apply_rotary_pos_emb): forward t cos (2e), the negated
//          half (e), the cat of the halves (2e), x sin (2e), the sum (3e) = 10e; backward
//          g cos (2e), g sin (2e), the negated half (e), the halves joined again (2e), the
//          two gradients of t summed (3e) = 10e; on the rotated share of each head
//          (rotary_percent).
std::optional<Op> TransformerOps::rotary_embedding(long long layer) const {
  if (model_.position_embedding != PositionEmbedding::kRope || model_.multi_latent_attention || llama_eager())
    return std::nullopt;
  const double elements = tokens_ * (static_cast<double>(model_.query_width()) / tp_ + kv_width_per_rank());
  const double per_element = training_.rope_fusion ? 2.0 * act_bytes_ : 10.0 * act_bytes_ * model_.rotary_percent;
  Op op = elementwise("rope", elements * per_element, 0.0, layer);
  op.backward_bytes = op.work.bytes;
  return op;
}

// SwiGLU without bias_activation_fusion, silu(gate) * up in PyTorch ops, per element of
// the rank's f (docs/model.md, "Forward, per layer"): forward, a bias's add over both
// halves (4e, with add_bias_linear), silu (2e), the product (3e); backward, the
// product's two gradients (3e each), silu's (3e) = 9e.
Op TransformerOps::unfused_swiglu(long long layer) const {
  const double f = static_cast<double>(model_.ffn_hidden_size) / tp_;
  const double bias = model_.add_bias_linear ? 4.0 : 0.0;
  Op op = elementwise("mlp_act", (bias + 5.0) * tokens_ * f * act_bytes_, 0.0, layer);
  op.backward_bytes = 9.0 * tokens_ * f * act_bytes_;
  op.kernel_class = "gelu";
  return op;
}

// Under an fp8 recipe with sequence parallelism a column-parallel fp8 GEMM's input is
// quantized before it is gathered, so its all-gather (and the backward re-gather of
// the saved input) moves 1 byte an element; the input gradient's reduction stays in
// the activation type. Transformer Engine: LayerNormLinear's norm writes fp8 ln_out,
// then gather_along_first_dim (layernorm_linear.py, v1.8 and 2.x); torchao's
// Float8ColwiseParallel casts before DTensor's all-gather.
void TransformerOps::fp8_gathered_inputs(std::vector<Op>& ops) const {
  if (sp_ <= 1.0 || training_.precision != hw::Precision::kFp8) return;
  for (std::size_t j = 0; j < ops.size(); ++j) {
    const long long f = column_input_of(ops, j);
    if (f < 0 || gather_bytes(ops[j]) == act_bytes_) continue;
    Op& marker = ops[static_cast<std::size_t>(f)];
    marker.backward_comm_bytes = marker.comm_bytes;
    marker.comm_bytes = marker.comm_bytes / act_bytes_ * gather_bytes(ops[j]);
  }
}

// trainsim-train's attention (kernels/trainer/gpt_model.cpp): permute_qkv moves q, k
// and v from the QKV GEMM's (b, s, 3, a, d) rows to three (b, a, s, d) tensors, the
// flash kernel runs, heads_to_rows moves its output back to (b, s, a, d) for the
// output projection. Each copy reads and writes its elements once: 6 and 2 x t h e
// bytes; backward, unpermute_qkv and rows_to_heads move the same bytes the other way.
// No measured kernel of ours does a copy, so the roofline prices them at the
// profile's device-to-device copy bandwidth.
std::vector<Op> TransformerOps::trainer_attention_forward(long long layer) const {
  const double h = static_cast<double>(model_.hidden_size);
  std::vector<Op> ops;
  ops.push_back(elementwise("attention.permute_qkv", 6.0 * tokens_ * h * act_bytes_, 0.0, layer, hw::KernelId::kNone));
  ops.back().kernel_class = "attention";
  ops.back().backward_bytes = ops.back().work.bytes;
  for (Op& op : attention_core_forward(layer)) ops.push_back(std::move(op));
  ops.push_back(elementwise("attention.heads_to_rows", 2.0 * tokens_ * h * act_bytes_, 0.0, layer, hw::KernelId::kNone));
  ops.back().kernel_class = "attention";
  ops.back().backward_bytes = ops.back().work.bytes;
  return ops;
}

std::vector<Op> TransformerOps::head_forward() const {
  if (eager()) return host_dispatched(eager_head_forward(), hw::HostPass::kForward, training_.cuda_graph);
  const double h = static_cast<double>(model_.hidden_size);
  const double v = static_cast<double>(model_.vocab_size) / tp_;  // vocabulary-parallel output layer
  const double norm_params = model_.normalization == Normalization::kLayerNorm ? 2.0 * h : h;
  const double out_params = model_.untie_embeddings ? v * h : 0.0;
  std::vector<Op> ops;
  ops.push_back(llama_eager() ? llama_eager_norm("final_norm", 1.0, norm_params, -1)
                              : elementwise("final_norm", 2.0 * tokens_ * h * act_bytes_ / sp_, norm_params, -1,
                                            hw::KernelId::kLayernormForward));
  if (tp_ > 1.0) ops.push_back(tp_enter("output_f", -1));
  ops.push_back(matmul("output_layer", tokens_, v, h, out_params, -1));
  // Megatron-Core's output layer is not a Transformer Engine layer: under an fp8
  // recipe it stays in 16 bits, operands included (docs/model.md, "FP8 recipes").
  keep_16_bit(ops.back());
  if (trainsim_train()) {
    // trainsim-train's softmax_cross_entropy: one kernel of the forward pass reads
    // each logit, writes its gradient in its place and a loss per token, reading the
    // target (kernels/reference/elementwise_ref.h, softmax_cross_entropy_bytes); the
    // backward pass starts from those gradients (no loss kernel of its own).
    ops.push_back(elementwise("loss", tokens_ * (2.0 * v * act_bytes_ + kTokenIdBytes + kFp32Bytes), 0.0, -1,
                              hw::KernelId::kSoftmaxCrossEntropy));
    ops.back().has_backward = false;
  } else {
    // Cross-entropy in fp32 over the logits (Megatron-LM casts them to float).
    // PyTorch's F.cross_entropy is priced as its log_softmax kernels, whose
    // bandwidth a calibration profile measures (our fused kernel stands in).
    const hw::KernelId loss = training_.cross_entropy == CrossEntropy::kTorch ? hw::KernelId::kTorchLogSoftmaxForward
                                                                               : hw::KernelId::kSoftmaxCrossEntropy;
    ops.push_back(elementwise("loss", tokens_ * v * loss_bytes_per_logit(false), 0.0, -1, loss));
    ops.back().backward_bytes = tokens_ * v * loss_bytes_per_logit(true);
  }
  if (training_.train_metric_passes > 0) {
    // Composer's training metrics (LLM Foundry's use_train_metrics): each is
    // torch.nn.CrossEntropyLoss under autocast over the logits, forward only: the fp32
    // cast (e + 4) and log_softmax (4 + 4) per logit, as "torch" (nll_loss reads one
    // logit a row). Composer runs them after the micro-batch's backward; no gradient.
    ops.push_back(elementwise("train_metrics",
                              training_.train_metric_passes * tokens_ * v * (act_bytes_ + 3.0 * kFp32Bytes), 0.0, -1,
                              hw::KernelId::kTorchLogSoftmaxForward));
    ops.back().has_backward = false;
    ops.back().kernel_class = "softmax_cross_entropy";
  }
  if (tp_ > 1.0) {
    // Vocabulary-parallel cross-entropy: all-reduces of the row maximum, the sum
    // of exponentials and the target logit, b s fp32 each (Megatron-LM
    // tensor_parallel/cross_entropy.py); nothing in the backward pass.
    Op stats;
    stats.name = "loss.tp";
    stats.comm_marker = true;
    stats.comm_forward = net::CollectiveKind::kAllReduce;
    stats.comm_bytes = 3.0 * tokens_ * kFp32Bytes;
    ops.push_back(stats);
  }
  return ops;
}

std::vector<Op> TransformerOps::head_backward() const {
  if (eager()) return host_dispatched(eager_head_backward(), hw::HostPass::kBackward, training_.cuda_graph);
  return reverse_pass(head_forward());
}

std::vector<Op> TransformerOps::layer_backward(long long layer) const {
  if (eager()) return host_dispatched(eager_layer_backward(layer), hw::HostPass::kBackward, training_.cuda_graph);
  const std::vector<Op> fwd = layer_forward_ops(layer);
  bool ring_done = false;
  // Context parallelism's ring, or its gathers, run again backward in their own
  // order (ring_attention_backward, all_gather_attention_backward).
  const auto context = [&](std::size_t i, std::vector<Op>& ops) {
    const Op& op = fwd[i];
    const bool attention = op.work.kind == hw::KernelClass::kAttention && !op.comm_marker;
    if (context_comm_ == ContextComm::kAllToAll || cp_ <= 1.0 || !(attention || op.scope == CommScope::kContext))
      return false;
    if (!ring_done)
      for (Op& step : context_comm_ == ContextComm::kAllGather   ? all_gather_attention_backward(layer)
                      : context_comm_ == ContextComm::kTorchRing ? torch_ring_attention_backward(layer)
                                                                 : ring_attention_backward(layer))
        ops.push_back(std::move(step));
    ring_done = true;
    return true;
  };
  // moe_shared_expert_overlap: the MoE block's backward in its own order.
  std::size_t block_begin = fwd.size();
  std::size_t block_end = 0;
  for (std::size_t i = 0; i < fwd.size(); ++i)
    if (fwd[i].moe_part != MoeOverlapPart::kNone) {
      block_begin = std::min(block_begin, i);
      block_end = i + 1;
    }
  const auto own = [&](std::size_t i, std::vector<Op>& ops) {
    if (i < block_begin || i >= block_end) return context(i, ops);
    if (i + 1 == block_end) {
      const auto first = fwd.begin() + static_cast<std::ptrdiff_t>(block_begin);
      for (Op& op : moe_overlap_backward({first, fwd.begin() + static_cast<std::ptrdiff_t>(block_end)}))
        ops.push_back(std::move(op));
    }
    return true;
  };
  if (tp_overlap_ != TpOverlap::kNone) return overlapped_backward(reverse_pass(fwd, context));
  return reverse_pass(fwd, own);
}

double TransformerOps::backward_flops_factor(const Op& fwd) const {
  const bool attention = fwd.work.kind == hw::KernelClass::kAttention && !fwd.comm_marker;
  return attention && is_flash(training_.attention_backend) ? kFlashBackwardFactor : 2.0;
}

// Bytes per logit of the cross-entropy (e: the logits' type, 4: fp32).
//   fused:   forward reads the logits, writes the fp32 softmax (e + 4); backward
//            rewrites the saved softmax into the gradient once (e + 4).
//   unfused (Megatron-LM's vocab_parallel_cross_entropy over logits.float()):
//            forward: cast (e + 4), max (4), subtract (8), exp (8), sum (4),
//            divide (8) = e + 36; backward: scale the saved softmax by the
//            incoming gradient (8), cast back (4 + e) = e + 12.
//   torch (F.cross_entropy(logits.float()), PyTorch's derivatives.yaml):
//            forward: cast (e + 4), log_softmax (4 + 4) = e + 12 (nll_loss reads
//            one logit per row); backward: nll_loss_backward's zero-filled
//            gradient (4), log_softmax_backward_data reading it and the saved
//            output and writing its own (12), cast back (4 + e) = e + 20.
double TransformerOps::loss_bytes_per_logit(bool backward) const {
  const double e = act_bytes_;
  switch (training_.cross_entropy) {
    case CrossEntropy::kFused: return e + kFp32Bytes;
    case CrossEntropy::kTorch: return backward ? e + 5.0 * kFp32Bytes : e + 3.0 * kFp32Bytes;
    case CrossEntropy::kUnfused: break;
  }
  return backward ? e + 3.0 * kFp32Bytes : e + 9.0 * kFp32Bytes;
}

// Bytes per attention score of the unfused softmax, kernel by kernel as Megatron-LM
// runs them (fused scale-mask-softmax, then torch dropout with a 1-byte mask):
//   forward:  softmax reads x, writes y (2e); dropout reads y, writes y' and the mask (2e + 1)
//   backward: dropout reads dy' and the mask, writes dy (2e + 1); softmax reads dy and y,
//             writes dx (3e)
double TransformerOps::softmax_bytes_per_score(bool backward) const {
  const double e = act_bytes_;
  const double dropout = model_.attention_dropout > 0.0 ? 2.0 * e + kMaskBytes : 0.0;
  return (backward ? 3.0 * e : 2.0 * e) + dropout;
}

// torchtitan's selective op AC (workload/op_sac.h; docs/model.md, "Recomputation"):
// the block's forward without what its policy saves. Kept in forward order: every
// memory-bound kernel (norms, activation, residual adds, fp8 casts), the sequence-
// parallel all-gathers (not in the save list; the reduce-scatters are), ring
// transfers aside (the attention they feed is saved); each trainsim GEMM is replaced
// by the block's aten.mm calls it stands for that were not saved; attention is saved.
std::vector<Op> TransformerOps::op_sac_recompute(long long layer) const {
  const std::vector<std::vector<BlockLinear>> linears = op_sac_block_linears(model_, tp_);
  std::vector<Op> ops;
  std::size_t gemm = 0;
  // The layer's own ops, each all-gather blocking: the recomputed matmuls are not the
  // block's GEMMs, so no tensor-parallel overlap pairs them (docs/model.md,
  // "Tensor-parallel communication overlap").
  for (Op& op : layer_forward_ops(layer)) {
    if (op.comm_marker) {
      if (op.scope == CommScope::kTensor && op.comm_forward == net::CollectiveKind::kAllGather)
        ops.push_back(std::move(op));
      continue;
    }
    if (op.work.kind == hw::KernelClass::kMemoryBound) {
      ops.push_back(std::move(op));
      continue;
    }
    if (op.work.kind != hw::KernelClass::kMatmul) continue;  // attention: saved
    if (gemm >= linears.size()) throw std::logic_error("op_sac_recompute: more GEMMs than the block's linears");
    int part = 0;
    for (const BlockLinear& linear : linears[gemm]) {
      ++part;
      if (linear.saved) continue;
      Op mm = matmul(op.name + ".mm" + std::to_string(part), tokens_, linear.out, linear.in, 0.0, layer);
      if (!op.work.fp8) keep_16_bit(mm);  // as the GEMM it is part of
      ops.push_back(std::move(mm));
    }
    ++gemm;
  }
  if (gemm != linears.size()) throw std::logic_error("op_sac_recompute: fewer GEMMs than the block's linears");
  return ops;
}

std::vector<Op> TransformerOps::layer_recompute(long long layer, Recompute granularity) const {
  std::vector<Op> ops;
  if (granularity == Recompute::kFull) {
    ops = layer_forward(layer);
  } else if (granularity == Recompute::kSelective && training_.attention_backend == AttentionBackend::kUnfused) {
    ops = attention_core_forward(layer);
    for (Op& op : ops) op.name = "layer" + std::to_string(layer) + "." + op.name;
  } else if (granularity == Recompute::kSelectiveOp) {
    ops = op_sac_recompute(layer);
  }
  for (Op& op : ops) {
    op.name += ".recompute";
    op.model_flops = 0.0;  // recomputation is not model work (DESIGN.md, result contract)
    op.grad_params = 0.0;
  }
  return ops;
}

std::vector<Op> TransformerOps::embedding_backward() const {
  if (eager()) return host_dispatched(eager_embedding_backward(), hw::HostPass::kBackward, training_.cuda_graph);
  std::vector<Op> fwd = embedding_forward();
  Op op = backward_of(fwd.front(), 1.0, 1.0);
  // g's backward is the identity: no collective before the embedding's backward.
  const double h = static_cast<double>(model_.hidden_size);
  const double r = hw::bytes_per_element(training_.grad_reduce_dtype);
  if (trainsim_train()) {
    // trainsim-train's own kernel: a scatter-add of the incoming gradient into the
    // fp32 embedding gradient.
    op.work.bytes = tokens_ * h * (act_bytes_ + 2.0 * r);
    return {op};
  }
  // PyTorch's embedding_dense_backward (F.embedding, Megatron's VocabParallelEmbedding
  // and nn.Embedding alike) makes a dense gradient of the table's shape in the
  // weight's 16 bits: zero-filled, then the incoming rows summed into it (read and
  // written once). Megatron-Core's DDP hook then adds it to the fp32 (or 16-bit)
  // main_grad, param.main_grad.add_(param.grad) (distributed_data_parallel.py,
  // _make_backward_post_hook): read both, write the sum, every micro-batch. Under
  // ZeRO-3 the dense gradient is reduce-scattered instead (its collective apart).
  const double rows = static_cast<double>(model_.vocab_size) / tp_ +
                      (model_.position_embedding == PositionEmbedding::kLearnedAbsolute
                           ? static_cast<double>(model_.max_position_embeddings)
                           : 0.0);
  const double accumulate = sharded_gradients_ ? 0.0 : act_bytes_ + 2.0 * r;
  op.work.bytes = 2.0 * tokens_ * h * act_bytes_ + rows * h * (act_bytes_ + accumulate);
  // Tied embeddings: the shared matrix's gradient is complete only now.
  return {op};
}

Op TransformerOps::optimizer_step(const OptimizerScope& scope) const {
  if (eager()) {
    Op op = eager_optimizer_step(scope.shard);
    op.work.host_pass = training_.cuda_graph ? hw::HostPass::kGraph : hw::HostPass::kOptimizer;
    return op;
  }
  const double states = training_.optimizer == Optimizer::kAdam ? 2.0 : 1.0;  // (m, v) or momentum
  // The update (Kingma & Ba 2015 for Adam): read the fp32 gradient, read and write
  // the fp32 master weight and each state.
  const double update = 4.0 + 2.0 * 4.0 + states * 2.0 * 4.0;
  // The global gradient norm reads the fp32 gradient once more.
  const double norm = 4.0;
  double per_shard = 0.0;
  double per_local = 0.0;
  if (trainsim_train()) {
    // trainsim-train: no clipping, so no norm; AdamW writes the bf16 copy as it
    // updates (adamw_bytes); the gradients are zeroed before each step and the
    // 1/dp average rides on the loss scale (docs/model.md, "trainsim-train").
    per_shard = update + act_bytes_;
    per_local = 4.0;
  } else if (scope.fsdp) {
    // torch.nn.utils.clip_grad_norm_ multiplies every gradient by the clamped
    // coefficient (read and write); FSDP casts to 16 bits when it gathers.
    per_shard = norm + 2.0 * 4.0 + update;
  } else {
    const double grad = hw::bytes_per_element(training_.grad_reduce_dtype);
    const bool mixed = act_bytes_ < 4.0;
    // Megatron-Core: 16-bit gradients become fp32 main gradients (read, write);
    // the updated master weight is copied into the 16-bit weight (read, write).
    const double to_main = grad < 4.0 ? grad + 4.0 : 0.0;
    const double to_model = mixed ? 4.0 + act_bytes_ : 0.0;
    per_shard = to_main + norm + update + to_model;
    // The whole gradient buffer is zeroed each iteration, and scaled by 1/dp
    // (read, write) before it is reduced.
    per_local = grad + (scope.prescale ? 2.0 * grad : 0.0);
  }
  // Adam's kernels are priced as our adamw kernel; SGD has no measured kernel (roofline).
  const hw::KernelId kernel = training_.optimizer == Optimizer::kAdam ? hw::KernelId::kAdamw : hw::KernelId::kNone;
  Op op = elementwise("optimizer_step", scope.shard * per_shard + scope.local * per_local, 0.0, -1, kernel);
  op.kernel_class = "optimizer";
  return op;
}

double TransformerOps::model_flops_per_microbatch() const {
  double fwd = 0.0;
  for (const Op& op : head_forward()) fwd += op.model_flops;
  // Layers of one kind (dense or MoE MLP, full or windowed attention) are alike:
  // one of each kind, times how many there are.
  std::array<long long, 4> first{-1, -1, -1, -1};
  std::array<double, 4> count{};
  for (long long l = 0; l < model_.num_layers; ++l) {
    const std::size_t kind = (model_.is_moe_layer(l) ? 1U : 0U) + (model_.is_window_layer(l) ? 2U : 0U);
    if (first[kind] < 0) first[kind] = l;
    count[kind] += 1.0;
  }
  for (std::size_t kind = 0; kind < first.size(); ++kind) {
    if (first[kind] < 0) continue;
    double per_layer = 0.0;
    for (const Op& op : layer_forward(first[kind])) per_layer += op.model_flops;
    fwd += per_layer * count[kind];
  }
  return 3.0 * fwd;
}

}  // namespace trainsim::workload
