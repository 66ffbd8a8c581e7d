#include "workload/memory.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>
#include <utility>

#include "hardware/precision.h"
#include "workload/ddp.h"
#include "workload/op_sac.h"
#include "workload/parameters.h"
#include "workload/pipeline_schedule.h"
#include "workload/transformer_ops.h"

namespace trainsim::workload {

namespace {
constexpr double kMask = 1.0;  // a dropout mask element is one byte
}  // namespace

// docs/model.md, "Memory of a PyTorch eager step". Every term is a tensor of
// scripts/pytorch-gpt-step.py's step, kept by autograd (the saved tensors of
// tools/autograd/derivatives.yaml), by the program or by the library.
EagerMemory eager_memory(const ModelConfig& m, const TrainingConfig& t) {
  constexpr double kBf16 = 2.0;
  constexpr double kFp32 = 4.0;
  constexpr double kIndex = 8.0;  // int64 token and position ids
  const double T = static_cast<double>(m.seq_length) * static_cast<double>(t.micro_batch_size);
  const double s = static_cast<double>(m.seq_length);
  const double h = static_cast<double>(m.hidden_size);
  const double q = static_cast<double>(m.query_width());
  const double n = static_cast<double>(m.query_width() + 2 * m.kv_width());  // c_attn's width
  const double f = static_cast<double>(m.ffn_hidden_size);
  const double a = static_cast<double>(m.num_attention_heads);
  const double V = static_cast<double>(m.vocab_size);
  const double L = static_cast<double>(m.num_layers);
  EagerMemory e;
  const ParameterCount count = count_parameters(m);
  e.parameters = count.total;
  e.block_parameters = count.attention_per_layer + count.mlp_per_layer + count.norms_per_layer;
  e.root_parameters = count.word_embeddings + count.position_embeddings + count.final_norm + count.output_layer;
  // AccumulateGrad steals each first gradient: lm_head's weight gradient is the
  // head's (the tied wte's first), an untied embedding's is the embedding's.
  e.head_gradients = 4.0 * (count.final_norm + count.word_embeddings);
  e.embedding_gradients = 4.0 * (count.position_embeddings + count.output_layer);
  // Autocast caches the bf16 cast of each weight; addmm / mm save it (mat2) for
  // the data gradient, so it lives until that GEMM's backward. lm_head's weight
  // (tied or not) is cast once more. Bias casts are not saved (addmm's bias
  // gradient is grad itself) and leave with the cache when autocast exits.
  e.layer_casts = kBf16 * (h * n + q * h + h * f + f * h);
  e.weight_casts = L * e.layer_casts + kBf16 * V * h;
  // Per block: each native_layer_norm saves its fp32 input and its fp32 mean and
  // rstd per row; each addmm saves its bf16 input (mat1): the two norms' casts,
  // SDPA's output (c_proj's input), GELU's output (mlp_proj's input). SDPA saves
  // q, k, v (views of c_attn's output), its output and the fp32 logsumexp per
  // head and row; GELU saves its input (c_fc's output).
  const double norms = 2.0 * (kFp32 * T * h + 2.0 * kFp32 * T + kBf16 * T * h);
  const double attention = kBf16 * T * n + kBf16 * T * q + kFp32 * a * T;
  const double mlp = kBf16 * T * f + kBf16 * T * f;
  e.layer_saved = norms + attention + mlp;
  // ln_f saves its input and statistics, lm_head's mm its bf16 input.
  e.head_saved = kFp32 * T * h + 2.0 * kFp32 * T + kBf16 * T * h;
  e.log_probs = kFp32 * T * V;
  e.logits_bf16 = kBf16 * T * V;
  e.logits_fp32 = kFp32 * T * V;
  // The step's idx and targets, and wpe's saved torch.arange ids.
  e.token_ids = 2.0 * kIndex * T + kIndex * s;
  // CublasHandlePool.cpp: a 32 MiB workspace per (handle, stream) on Hopper and
  // Blackwell, from the caching allocator, kept; cuBLASLt shares it (unified by
  // default). Handles are per thread: the forward's, and the autograd engine's
  // device thread's for the backward.
  e.workspaces = 2.0 * 32.0 * 1024.0 * 1024.0;
  e.embedding_grad = m.untie_embeddings ? 0.0 : kFp32 * V * h;
  return e;
}

double EagerMemory::head_backward_peak(long long layers) const {
  // Inside _log_softmax_backward_data: the saved log-probabilities, its incoming
  // gradient (nll_loss_backward's zero-filled T x V) and its output. set_to_none
  // left no gradient, the autocast region's bf16 logits and fp32 copy are gone.
  return 12.0 * parameters + weight_casts + static_cast<double>(layers) * layer_saved + head_saved + token_ids +
         log_probs + 2.0 * logits_fp32 + workspaces;
}

double EagerMemory::embedding_backward_peak() const {
  return 16.0 * parameters + embedding_grad + token_ids + workspaces;
}

double EagerMemory::fsdp2_states(double shards) const { return 12.0 * parameters / shards + 4.0 * root_parameters; }

// FSDP2 (docs/model.md, "PyTorch eager under FSDP2"), in program order: a block's
// gathered weights (b = 4 P_b) from its gather to the end of its pass, the next block
// gathered one ahead (the root's pre-backward hook prefetches the last block at the
// backward's start); a block's gradients (b) from its backward to its chunk_cat, the
// reduce-scatter input (b) from its chunk_cat to the next unit's, the shard (b / d) from
// the reduce-scatter on. The root's gradients reduce-scatter last.
EagerMemory::Moment EagerMemory::fsdp2_peak(long long layers, double shards) const {
  const double L = static_cast<double>(layers);
  const double b = 4.0 * block_parameters;
  const double base = fsdp2_states(shards) + workspaces + token_ids;
  const double block = layer_saved + layer_casts;  // one block's saved tensors and weight casts
  const double head_cast = weight_casts - L * layer_casts;
  Moment peak;
  const auto consider = [&](double total, double casts, double grads, std::string_view at) {
    if (total > peak.total) peak = {total, casts, grads, at};
  };
  // Forward: blocks 0..i alive, i and i + 1 gathered.
  for (long long i = 0; i < layers; ++i)
    consider(base + static_cast<double>(i + 1) * block + (i + 1 < layers ? 2.0 : 1.0) * b,
             static_cast<double>(i + 1) * layer_casts, 0.0, "forward");
  // log_softmax's backward, the last block gathered.
  consider(base + L * block + head_saved + head_cast + log_probs + 2.0 * logits_fp32 + b, weight_casts, 0.0,
           "log_softmax.backward");
  // Block i's backward: its start (it and i - 1 gathered) and its chunk_cat (it
  // resharded and its saved tensors gone; its gradients and reduce-scatter input, i +
  // 1's input still held).
  for (long long i = layers - 1; i >= 0; --i) {
    const double alive = static_cast<double>(i) * block;
    const double shards_done = static_cast<double>(layers - 1 - i) * b / shards + head_gradients;
    const double held_input = i + 1 < layers ? b : 0.0;
    const double prefetched = i > 0 ? b : 0.0;
    consider(base + alive + block + shards_done + held_input + b + prefetched,
             static_cast<double>(i + 1) * layer_casts, shards_done, "block backward");
    consider(base + alive + shards_done + 2.0 * b + held_input + prefetched, static_cast<double>(i) * layer_casts,
             shards_done + b, "fsdp_chunk_cat");
  }
  // The embedding's backward, then the root's chunk_cat (the token ids gone, the
  // embedding's gradients made): every block sharded, block 0's reduce-scatter input
  // held, the root's gradients and its input.
  const double sharded = L * b / shards + head_gradients;
  consider(base + sharded + b + embedding_grad, 0.0, sharded, "embedding backward");
  consider(base - token_ids + sharded + embedding_gradients + b + 4.0 * root_parameters, 0.0,
           sharded + embedding_gradients, "root.fsdp_chunk_cat");
  return peak;
}

StateBytes state_bytes_per_parameter(const TrainingConfig& t) {
  StateBytes s;
  const bool mixed = activation_element_bytes(t) < 4.0;
  s.weights = mixed ? 2.0 : 4.0;
  s.gradients = hw::bytes_per_element(t.grad_reduce_dtype);
  // Mixed precision keeps an fp32 master copy beside the optimizer's own states
  // (ZeRO paper, section 3.1: K = 12 for Adam = master + momentum + variance).
  const double states = t.optimizer == Optimizer::kAdam ? 8.0 : 4.0;
  s.optimizer = states + (mixed ? 4.0 : 0.0);
  return s;
}

StateBytes sharded_state_bytes(const TrainingConfig& training, double params, int zero_stage, int data) {
  const StateBytes per = state_bytes_per_parameter(training);
  const double nd = static_cast<double>(std::max(1, data));
  StateBytes s;
  s.weights = per.weights * params;
  s.gradients = per.gradients * params;
  s.optimizer = per.optimizer * params;
  if (zero_stage >= 1) s.optimizer /= nd;
  if (zero_stage >= 2) s.gradients /= nd;
  if (zero_stage >= 3) s.weights /= nd;
  return s;
}

namespace {
// The tokens of one micro-batch on a rank: b s, of which context parallelism keeps s/c.
double rank_tokens(const ModelConfig& m, long long micro_batch, ActivationSplit split) {
  return static_cast<double>(m.seq_length) / std::max(1, split.context) * static_cast<double>(micro_batch);
}
}  // namespace

double layer_activation_bytes(const ModelConfig& m, const TrainingConfig& t, Recompute r, long long micro_batch,
                              ActivationSplit split, long long layer) {
  if (layer < 0 && m.mixes_layers())
    throw std::logic_error("layer_activation_bytes: the model mixes dense and MoE layers; name the layer");
  const bool moe = m.is_moe_layer(std::max(0LL, layer));
  const double e = activation_element_bytes(t);
  const double b = static_cast<double>(micro_batch);
  const double s = static_cast<double>(m.seq_length) / std::max(1, split.context);
  const double sb = rank_tokens(m, micro_batch, split);
  const double h = static_cast<double>(m.hidden_size);
  const double tp = static_cast<double>(split.tensor);
  // Tensors outside the tensor-parallel region (layer inputs, norms, dropout
  // masks) are whole on every rank unless sequence parallelism splits them.
  const double whole = split.sequence_parallel ? tp : 1.0;
  if (r == Recompute::kFull) return e * sb * h / whole;  // only the layer's input (Korthikanti: 2sbh)
  if (r == Recompute::kSelectiveOp) {
    // torchtitan's selective op AC (workload/op_sac.h): the block's input, the
    // outputs of the saved aten.mm calls (t·b x out on a rank; the row-parallel ones
    // whole before their reduction), the attention output with its fp32 log-sum-exp,
    // and with SP the two reduce-scatters' outputs.
    double saved = e * sb * h / whole;
    for (const auto& group : op_sac_block_linears(m, tp))
      for (const BlockLinear& linear : group)
        if (linear.saved) saved += e * sb * linear.out;
    const double heads = static_cast<double>(m.num_attention_heads) / tp;
    saved += e * sb * static_cast<double>(m.query_width()) / tp + 4.0 * heads * sb;
    if (split.sequence_parallel && split.tensor > 1) saved += 2.0 * e * sb * h / tp;
    return saved;
  }

  const double q = static_cast<double>(m.query_width()) / tp;
  const double kv = static_cast<double>(m.kv_width()) / tp;
  const double f = static_cast<double>(m.ffn_hidden_size) / tp;
  const double a = static_cast<double>(m.num_attention_heads) / tp;
  const double hidden_mask = m.hidden_dropout > 0.0 ? kMask * sb * h / whole : 0.0;

  // Attention block (Korthikanti et al. 2022, section 4.1: 11 sbh + 5 a s^2 b for
  // MHA with dropout; Table 2 for t and SP): QKV input, Q and K, V,
  // output-projection input, dropout mask.
  double attention = e * sb * h / whole + e * sb * (q + kv) + e * sb * kv + e * sb * q + hidden_mask;
  if (m.qk_layernorm) attention += e * sb * (q + kv);  // the norm's input, besides its output for attention
  if (m.multi_latent_attention) {
    // MLA: the down projections' input, the up projections' inputs (the latents,
    // whole on every TP rank; their norms' inputs too with qk_layernorm), Q and K of
    // d_qk + d_r per head, V, and the output projection's input (d_v per head).
    const double latents = static_cast<double>(m.q_lora_rank + m.kv_lora_rank);
    const double qk = static_cast<double>(m.attention_qk_width()) / tp;
    const double v = static_cast<double>(m.attention_v_width()) / tp;
    attention = e * sb * h / whole + e * sb * latents * (m.qk_layernorm ? 2.0 : 1.0) + e * sb * 2.0 * qk +
                e * sb * v + e * sb * v + hidden_mask;
  }
  const bool flash = is_flash(t.attention_backend);
  if (flash) {
    attention += 4.0 * a * sb;  // fp32 log-sum-exp per row
  } else if (r != Recompute::kSelective) {
    const double scores = a * s * s * b;
    attention += e * scores;  // softmax output
    if (m.attention_dropout > 0.0) attention += kMask * scores + e * scores;  // mask and dropout output
  }

  // MLP block (19 sbh for f = 4h): fc1 input, activation input, fc2 input, mask.
  const double up = m.swiglu ? 2.0 * f : f;
  double mlp = 0.0;
  if (!moe) {
    mlp = e * sb * h / whole + e * sb * up + e * sb * f + hidden_mask;
    // Unfused SwiGLU: the product keeps silu's output as well (bias_activation_fusion).
    if (m.swiglu && !t.bias_activation_fusion) mlp += e * sb * f;
  } else {
    const double k = static_cast<double>(m.moe_router_topk);
    const double experts = static_cast<double>(m.num_experts);
    const double c = m.moe_expert_capacity_factor.value_or(1.0);
    // Router input and fp32 logits, then the k dispatched copies of each token
    // (padded to capacity c), whichever ranks' experts compute them, each with its
    // expert's FFN inputs (moe_ffn_hidden_size, split by the expert TP size like f).
    const double fe = static_cast<double>(m.expert_ffn()) / tp;
    const double up_e = m.swiglu ? 2.0 * fe : fe;
    mlp = e * sb * h / whole + 4.0 * sb * experts / whole +
          c * k * (e * sb * h / whole + e * sb * up_e + e * sb * fe) + hidden_mask;
    if (m.has_shared_expert()) {
      // The shared experts' MLP reads the router's input (saved once) and keeps its
      // activation's input and the down projection's input, split t ways.
      const double fs = static_cast<double>(m.moe_shared_expert_intermediate_size) / tp;
      mlp += e * sb * (m.swiglu ? 2.0 * fs : fs) + e * sb * fs;
    }
  }
  const double norms = 2.0 * e * sb * h / whole;  // the inputs of both norms (4 sbh)
  return attention + mlp + norms;
}

double recomputed_activation_bytes(const ModelConfig& m, const TrainingConfig& t, Recompute r, long long b,
                                   ActivationSplit split, long long layer) {
  if (r == Recompute::kFull) return layer_activation_bytes(m, t, Recompute::kNone, b, split, layer);
  if (r == Recompute::kSelectiveOp)
    return std::max(0.0, layer_activation_bytes(m, t, Recompute::kNone, b, split, layer) -
                             layer_activation_bytes(m, t, r, b, split, layer));
  return 0.0;
}

double embedding_activation_bytes(const ModelConfig& m, const TrainingConfig&, long long micro_batch,
                                  ActivationSplit split) {
  const double sb = rank_tokens(m, micro_batch, split);
  const double whole = split.sequence_parallel ? static_cast<double>(split.tensor) : 1.0;
  return m.hidden_dropout > 0.0 ? kMask * sb * static_cast<double>(m.hidden_size) / whole : 0.0;
}

double head_activation_bytes(const ModelConfig& m, const TrainingConfig& t, long long micro_batch,
                             ActivationSplit split) {
  const double e = activation_element_bytes(t);
  const double sb = rank_tokens(m, micro_batch, split);
  const double h = static_cast<double>(m.hidden_size);
  const double v = static_cast<double>(m.vocab_size);
  const double tp = static_cast<double>(split.tensor);
  const double whole = split.sequence_parallel ? tp : 1.0;
  // Korthikanti et al. section 4.3: final norm input, output-layer input, and the
  // fp32 softmax kept by the cross-entropy loss (vocabulary split t ways).
  return 2.0 * e * sb * h / whole + 4.0 * sb * v / tp;
}

double loss_backward_transient_bytes(const ModelConfig& m, const TrainingConfig& t, long long micro_batch,
                                     ActivationSplit split) {
  if (t.cross_entropy != CrossEntropy::kTorch) return 0.0;
  const double sb = rank_tokens(m, micro_batch, split);
  // F.cross_entropy's backward: nll_loss_backward's fp32 gradient of the logits'
  // shape and log_softmax_backward_data's output, both alive beside the saved
  // log-probabilities (counted in head_activation_bytes) until the latter ends.
  return 8.0 * sb * static_cast<double>(m.vocab_size) / static_cast<double>(split.tensor);
}

double outside_layers_activation_bytes(const ModelConfig& m, const TrainingConfig& t, long long micro_batch) {
  return embedding_activation_bytes(m, t, micro_batch) + head_activation_bytes(m, t, micro_batch);
}

namespace {

// Expert weights of one decoder layer on one GPU: E/ep experts split t ways
// (their row-parallel down-projection biases whole).
// `moe`: an MoE layer (ModelConfig::is_moe_layer); a dense layer has none.
double layer_expert_parameters(const ModelConfig& m, const ParallelConfig& p, bool moe) {
  if (!moe) return 0.0;
  const ParameterCount c = count_parameters(m);
  const double h = static_cast<double>(m.hidden_size);
  const double bias = m.add_bias_linear ? 1.0 : 0.0;
  const double experts = static_cast<double>(m.num_experts);
  const double router = h * experts;
  const double all = c.mlp_per_layer - router - c.shared_expert_per_layer;  // every routed expert
  return ((all - experts * bias * h) / static_cast<double>(p.expert_tp()) + experts * bias * h) /
         static_cast<double>(p.expert);
}

// Parameters of one decoder layer on one GPU of the tensor-parallel group.
// `moe`: an MoE layer (ModelConfig::is_moe_layer), else a dense one.
double layer_parameters(const ModelConfig& m, const ParallelConfig& p, bool moe) {
  const ParameterCount c = count_parameters(m);
  const double tp = static_cast<double>(p.tensor);
  const double h = static_cast<double>(m.hidden_size);
  const double bias = m.add_bias_linear ? 1.0 : 0.0;
  if (moe) {
    // Attention and the shared experts split t ways (their row-parallel output
    // biases whole), the router whole, the routed experts apart.
    const double router = h * static_cast<double>(m.num_experts);
    const double shared_bias = m.has_shared_expert() ? bias * h : 0.0;
    const double replicated =
        bias * h + shared_bias + router + c.norms_per_layer + qk_norm_parameters(m) + mla_down_projection_parameters(m);
    return (c.attention_per_layer + c.shared_expert_per_layer + router + c.norms_per_layer - replicated) / tp +
           replicated + layer_expert_parameters(m, p, true);
  }
  // Row-parallel biases (attention output, MLP down) are whole on every rank. A
  // dense layer of an MoE model has the dense MLP of ffn_hidden_size.
  const double mlp = m.is_moe() ? c.dense_mlp_per_layer : c.mlp_per_layer;
  const double replicated =
      bias * h + bias * h + c.norms_per_layer + qk_norm_parameters(m) + mla_down_projection_parameters(m);
  return (c.attention_per_layer + mlp + c.norms_per_layer - replicated) / tp + replicated;
}

// ZeRO-3 gathers parameters unit by unit (a layer, the embedding, the head); the
// largest unit of a stage sets the size of the gather buffer.
double largest_gathered_unit(const ModelConfig& m, const ParallelConfig& p, int stage) {
  const ParameterCount c = count_parameters(m);
  const double tp = static_cast<double>(p.tensor);
  const double dense = layer_parameters(m, p, false);
  const double moe = layer_parameters(m, p, true);
  double unit = 0.0;
  for (const long long l : stage_layer_indices(m.num_layers, p, stage))
    unit = std::max(unit, m.is_moe_layer(l) ? moe : dense);
  if (stage == 0) unit = std::max(unit, c.word_embeddings / tp + c.position_embeddings);
  if (stage == p.pipeline - 1 && m.untie_embeddings) unit = std::max(unit, c.final_norm + c.output_layer / tp);
  return unit;
}

}  // namespace

double stage_parameters(const ModelConfig& m, const ParallelConfig& p, int stage) {
  const ParameterCount c = count_parameters(m);
  const double tp = static_cast<double>(p.tensor);
  // Layers of one kind hold the same weights: each kind priced once.
  const double dense = layer_parameters(m, p, false);
  const double moe = layer_parameters(m, p, true);
  double n = 0.0;
  for (const long long l : stage_layer_indices(m.num_layers, p, stage)) n += m.is_moe_layer(l) ? moe : dense;
  if (stage == 0) n += c.word_embeddings / tp + c.position_embeddings;
  if (stage == p.pipeline - 1) {
    n += c.final_norm;
    if (m.untie_embeddings) n += c.output_layer / tp;
    else if (p.pipeline > 1) n += c.word_embeddings / tp;  // the tied copy on the last stage
  }
  return n;
}

double stage_expert_parameters(const ModelConfig& m, const ParallelConfig& p, int stage) {
  const double per_moe_layer = layer_expert_parameters(m, p, true);
  double n = 0.0;
  for (const long long l : stage_layer_indices(m.num_layers, p, stage)) n += m.is_moe_layer(l) ? per_moe_layer : 0.0;
  return n;
}

namespace {

// One micro-batch, no recomputation (the scenario reader checks it); under PyTorch
// DDP, whose flat fp32 buckets hold a second copy of the gradients all along, or FSDP2
// over `shards` ranks (docs/model.md, "PyTorch eager under FSDP2").
MemoryEstimate eager_estimate(const ModelConfig& m, const TrainingConfig& t, bool ddp, double shards) {
  const EagerMemory e = eager_memory(m, t);
  MemoryEstimate est;
  est.parameters = e.parameters;
  est.workspaces = e.workspaces;
  if (shards > 1.0) {
    const EagerMemory::Moment peak = e.fsdp2_peak(m.num_layers, shards);
    est.gathered_weights = 4.0 * e.root_parameters;
    est.weight_casts = peak.weight_casts;
    est.weights = 4.0 * e.parameters / shards + est.gathered_weights + peak.weight_casts;
    est.optimizer_states = 8.0 * e.parameters / shards;  // fused AdamW's moments of the shard
    est.gradients = peak.gradients;
    est.activations = peak.total - est.weights - est.optimizer_states - est.gradients;
    return est;
  }
  est.weights = 4.0 * e.parameters;
  est.optimizer_states = 8.0 * e.parameters;  // fused AdamW: exp_avg, exp_avg_sq
  const double head = e.head_backward_peak(m.num_layers);
  const double end = e.embedding_backward_peak();
  if (head >= end) {
    est.weight_casts = e.weight_casts;
    est.weights += e.weight_casts;
    est.activations = head - 12.0 * e.parameters - e.weight_casts;
  } else {
    est.gradients = 4.0 * e.parameters;
    est.activations = end - 16.0 * e.parameters;
    est.in_flight_microbatches = 0.0;
  }
  est.ddp_buckets = ddp ? 4.0 * e.parameters : 0.0;
  est.gradients += est.ddp_buckets;
  return est;
}

// trainsim-train allocates every buffer once, before the first step
// (kernels/trainer/gpt_model.cpp, GpuModel::GpuModel), so its memory is flat: with
// P parameters, t = b s tokens, h hidden, f FFN width, a heads, V the padded
// vocabulary, L layers and k accumulation steps (docs/model.md, "Memory of a
// trainsim-train step"):
//   states       fp32 master, gradients, m, v and the bf16 copy: 18 P
//   per layer    bf16 ln1, q k v (3), attention output, its rows, residual, ln2,
//                residual out: 9 t h; GELU input and output: 2 t f; fp32 norm
//                statistics 2 x 2 t and the log-sum-exp t a
//   outside      bf16 x0, lnf, qkv rows (3), scratch, dres, dtmp, dtmp2, dq k v (3),
//                datto: 13 t h; logits t V; dbig t f; ones t; fp32 lnf statistics 2t;
//                token ids, targets and losses 3 k t x 4 bytes
//   workspaces   cuBLASLt's 64 MiB, the attention backward's fp32 delta and dq
//                (t a + t h) x 4 bytes, each rounded to 256 bytes; the layer-norm and
//                embedding backward scratch (under 1 MiB at these sizes) are left out
MemoryEstimate trainer_estimate(const ModelConfig& m, const TrainingConfig& t, const ParallelConfig& p) {
  const double P = count_parameters(m).total;
  const double tokens = static_cast<double>(t.micro_batch_size) * static_cast<double>(m.seq_length);
  const double h = static_cast<double>(m.hidden_size), f = static_cast<double>(m.ffn_hidden_size);
  const double a = static_cast<double>(m.num_attention_heads), v = static_cast<double>(m.vocab_size);
  const double L = static_cast<double>(m.num_layers);
  const auto k = static_cast<double>(std::max(1LL, microbatches_per_replica(t, p)));
  constexpr double kBf16 = 2.0, kF32 = 4.0, kGemmWorkspace = 64.0 * 1024 * 1024;
  const auto round256 = [](double bytes) { return std::ceil(bytes / 256.0) * 256.0; };
  const double per_layer = (9.0 * tokens * h + 2.0 * tokens * f) * kBf16 + (4.0 * tokens + tokens * a) * kF32;
  const double outside = (13.0 * tokens * h + tokens * v + tokens * f + tokens) * kBf16 + 2.0 * tokens * kF32 +
                         3.0 * k * tokens * 4.0;
  MemoryEstimate est;
  est.parameters = P;
  est.weights = (4.0 + 2.0) * P;
  est.gradients = 4.0 * P;
  est.optimizer_states = 8.0 * P;
  est.workspaces = kGemmWorkspace + round256(tokens * a * kF32) + round256(tokens * h * kF32);
  est.activations = L * per_layer + outside + est.workspaces;
  return est;
}

// Transformer Engine's cached quantized weights (docs/model.md, "FP8 recipes"): a
// Megatron-style step (framework "fused") under an fp8 or fp4 recipe without
// fp8_param_gather keeps, for every GEMM weight that runs quantized, a quantized copy
// and its transpose across the step's micro-batches
// (TransformerEngineBaseModule._fp8_workspaces, kept while is_first_microbatch is not
// None, as Megatron-Core's TE layers pass it): 2 g bytes per weight element, g the
// recipe's element bytes. FSDP (zero_stage 3) and disable_parameter_transpose_cache
// quantize per use and cache nothing. Returns those bytes per decoder layer on one GPU
// (empty: none cached), for the weights TransformerOps prices as quantized GEMMs.
std::vector<double> quantized_weight_cache_per_layer(const ModelConfig& m, const TrainingConfig& t,
                                                     const ParallelConfig& p) {
  if (t.framework != Framework::kFused || !hw::quantized_gemms(t.precision) || quantized_param_gather(t) ||
      t.disable_parameter_transpose_cache || p.zero_stage >= 3)
    return {};
  const TransformerOps ops(m, t, t.micro_batch_size, p.tensor, p.sequence_parallel, p.context, p.expert,
                           p.folded_experts(), p.context_comm, p.tp_overlap, false, p.shared_expert_overlap);
  const double bytes = 2.0 * quantized_element_bytes(t);
  // Layers alike (dense or MoE, quantized or kept in bf16) hold the same weights: each kind built once.
  std::map<std::pair<bool, bool>, double> per_kind;
  std::vector<double> cache(static_cast<std::size_t>(m.num_layers));
  for (long long l = 0; l < m.num_layers; ++l) {
    const bool bf16 = l < t.bf16_first_layers || l >= m.num_layers - t.bf16_last_layers;
    const auto [it, fresh] = per_kind.try_emplace({m.is_moe_layer(l), bf16}, 0.0);
    if (fresh)
      for (const Op& op : ops.layer_forward(l)) it->second += bytes * quantized_weight_params(op);
    cache[static_cast<std::size_t>(l)] = it->second;
  }
  return cache;
}

// Pipeline stage `s`'s parameters and the bytes of its weights, gradients and
// optimizer states (docs/model.md, "Memory"), sharded by ZeRO where it is on;
// `weight_cache` is quantized_weight_cache_per_layer's.
MemoryEstimate stage_states(const ModelConfig& m, const TrainingConfig& t, const ParallelConfig& p, int s,
                            const std::vector<double>& weight_cache) {
  const StateBytes per = state_bytes_per_parameter(t);
  MemoryEstimate est;
  est.stage = s;
  est.parameters = stage_parameters(m, p, s);
  if (p.zero_stage == 0) {
    est.weights = per.weights * est.parameters;
    est.gradients = per.gradients * est.parameters;
    est.optimizer_states = per.optimizer * est.parameters;
  } else {
    // Dense weights are sharded over the dp x cp ranks that replicate them,
    // expert weights over the ranks holding the same experts (dp x cp / ep, or
    // tp x cp x dp / ep with folded experts).
    const double expert = stage_expert_parameters(m, p, s);
    const int dense_dp = p.data * p.context;
    const StateBytes dense = sharded_state_bytes(t, est.parameters - expert, p.zero_stage, dense_dp);
    const StateBytes experts =
        sharded_state_bytes(t, expert, p.zero_stage, static_cast<int>(p.expert_data_parallel_size()));
    est.weights = dense.weights + experts.weights;
    est.gradients = dense.gradients + experts.gradients;
    est.optimizer_states = dense.optimizer + experts.optimizer;
    if (p.zero_stage >= 3 && dense_dp > 1) {
      // The layer being computed, and the next one when its gather is prefetched.
      const double units = p.overlap_param_gather ? 2.0 : 1.0;
      est.gathered_weights = units * per.weights * largest_gathered_unit(m, p, s);
      est.weights += est.gathered_weights;
    }
  }
  if (!weight_cache.empty())
    for (const long long l : stage_layer_indices(m.num_layers, p, s))
      est.quantized_weight_cache += weight_cache[static_cast<std::size_t>(l)];
  est.weights += est.quantized_weight_cache;
  // async_ps: the servers keep the optimizer states (and the master weights).
  if (p.mode == TrainingMode::kAsyncPs) est.optimizer_states = 0.0;
  // CPU optimizer offload: the offloaded share's master weights and moments live
  // in host memory, beside a pinned copy of their main gradients in the gradients'
  // type (Megatron-Core's HybridDeviceOptimizer; docs/model.md, "CPU optimizer offload").
  // DeepSpeed's ZeRO-Offload: all of it, with the fp32 gradient partition and a
  // pinned 16-bit buffer for the parameters' way back (stage_1_and_2.py).
  if (p.offload_optimizer && per.optimizer > 0.0) {
    const double shard = est.optimizer_states / per.optimizer;
    est.optimizer_states = 0.0;
    est.host_bytes += shard * (per.optimizer + 4.0 + per.weights);
  }
  if (const double f = t.optimizer_offload_fraction; f > 0.0 && per.optimizer > 0.0) {
    const double shard = est.optimizer_states / per.optimizer;
    est.optimizer_states *= 1.0 - f;
    est.host_bytes += f * shard * (per.optimizer + per.gradients);
  }
  return est;
}

// CPU activation offload (workload/activation_offload.h; docs/model.md, "CPU
// activation offload"), one stage holding the whole model, one micro-batch alive
// at a time: a layer's forward and its backward each find the layers of a window
// of L - N alive (fewer near the start), and the head's pass (its activations and
// its loss's backward) the last window; the first N layers' activations wait in
// host memory.
void offload_activations(const std::vector<double>& layer, int offloaded, double embedding, double head_pass,
                         MemoryEstimate& est) {
  const std::size_t window = layer.size() - static_cast<std::size_t>(offloaded);
  double alive = 0.0;
  double largest = 0.0;
  std::size_t largest_layers = 0;
  for (std::size_t k = 0; k < layer.size(); ++k) {
    alive += layer[k];
    if (k >= window) alive -= layer[k - window];
    if (alive > largest) {
      largest = alive;
      largest_layers = std::min(k + 1, window);
    }
  }
  const double last = alive + head_pass;
  est.activations = embedding + std::max(largest, last);
  est.in_flight_microbatches =
      static_cast<double>(last >= largest ? window : largest_layers) / static_cast<double>(layer.size());
  for (std::size_t l = 0; l < static_cast<std::size_t>(offloaded); ++l) est.host_bytes += layer[l];
}

}  // namespace

std::vector<double> layers_activation_bytes(const ModelConfig& m, const TrainingConfig& t, const ParallelConfig& p) {
  const ActivationSplit split{p.tensor, p.sequence_parallel, p.context};
  std::vector<double> bytes(static_cast<std::size_t>(m.num_layers));
  for (long long l = 0; l < m.num_layers; ++l)
    bytes[static_cast<std::size_t>(l)] = layer_activation_bytes(m, t, p.recompute, t.micro_batch_size, split, l);
  return bytes;
}

std::vector<MemoryEstimate> memory_per_stage(const ModelConfig& m, const TrainingConfig& t, const ParallelConfig& p) {
  if (t.framework == Framework::kPytorchEager)
    return {eager_estimate(m, t, under_ddp(t, p), under_fsdp2(t, p) ? static_cast<double>(p.data) : 1.0)};
  if (t.framework == Framework::kTrainsimTrain) return {trainer_estimate(m, t, p)};
  const ActivationSplit split{p.tensor, p.sequence_parallel, p.context};
  const long long b = t.micro_batch_size;
  const int chunks = model_chunks(m.num_layers, p);
  const std::vector<long long> layers = virtual_stage_layers(m.num_layers, p);
  const int microbatches = static_cast<int>(std::max(1LL, microbatches_per_replica(t, p)));
  // Per layer (dense and MoE layers differ); during a layer's backward its
  // recomputed activations are alive too.
  const std::vector<double> layer = layers_activation_bytes(m, t, p);
  std::vector<double> recomputed(layer.size(), 0.0);
  for (long long l = 0; l < m.num_layers; ++l)
    recomputed[static_cast<std::size_t>(l)] = recomputed_activation_bytes(m, t, p.recompute, b, split, l);
  // Where each virtual stage's layers start in the model (chunk-major: v = c pp + s).
  std::vector<long long> first_layer(layers.size() + 1, 0);
  for (std::size_t v = 0; v < layers.size(); ++v) first_layer[v + 1] = first_layer[v] + layers[v];
  const double embedding = embedding_activation_bytes(m, t, b, split);
  const double head = head_activation_bytes(m, t, b, split);
  const double loss_transient = loss_backward_transient_bytes(m, t, b, split);
  const std::vector<double> weight_cache = quantized_weight_cache_per_layer(m, t, p);

  if (p.offloaded_layers > 0) {
    MemoryEstimate est = stage_states(m, t, p, 0, weight_cache);
    offload_activations(layer, p.offloaded_layers, embedding, head + loss_transient, est);
    return {est};
  }
  std::vector<MemoryEstimate> out;
  for (int s = 0; s < p.pipeline; ++s) {
    MemoryEstimate est = stage_states(m, t, p, s, weight_cache);
    // Walk the stage's schedule: a pass's activations live from its forward to
    // its backward; the peak is after a forward or inside a backward.
    const auto chunk_layers = [&](int c) {
      return static_cast<double>(layers[static_cast<std::size_t>(c * p.pipeline + s)]);
    };
    double stage_layers = 0.0;
    for (int c = 0; c < chunks; ++c) stage_layers += chunk_layers(c);
    const auto chunk_sum = [&](int c, const std::vector<double>& per_layer) {
      const std::size_t v = static_cast<std::size_t>(c * p.pipeline + s);
      double sum = 0.0;
      for (long long l = first_layer[v]; l < first_layer[v + 1]; ++l) sum += per_layer[static_cast<std::size_t>(l)];
      return sum;
    };
    // The largest recomputed layer of the stage bounds what a backward adds.
    double recompute_peak = 0.0;
    for (int c = 0; c < chunks; ++c) {
      const std::size_t v = static_cast<std::size_t>(c * p.pipeline + s);
      for (long long l = first_layer[v]; l < first_layer[v + 1]; ++l)
        recompute_peak = std::max(recompute_peak, recomputed[static_cast<std::size_t>(l)]);
    }
    const auto holds_head = [&](int c) { return s == p.pipeline - 1 && c == chunks - 1; };
    const auto pass_bytes = [&](int c) {
      double bytes = chunk_sum(c, layer);
      if (s == 0 && c == 0) bytes += embedding;
      if (holds_head(c)) bytes += head;
      return bytes;
    };
    double alive = 0.0;
    double alive_layers = 0.0;
    double peak = 0.0;
    double peak_layers = 0.0;
    for (const PipelineStep& step : pass_order(p, p.pipeline, s, microbatches, chunks)) {
      if (step.forward) {
        alive += pass_bytes(step.chunk);
        alive_layers += chunk_layers(step.chunk);
        if (alive > peak) {
          peak = alive;
          peak_layers = alive_layers;
        }
        continue;
      }
      // A backward adds its largest recomputed layer, and the head's pass its loss's
      // backward first.
      const double added = std::max(recompute_peak, holds_head(step.chunk) ? loss_transient : 0.0);
      if (alive + added > peak) {
        peak = alive + added;
        peak_layers = alive_layers;
      }
      alive -= pass_bytes(step.chunk);
      alive_layers -= chunk_layers(step.chunk);
    }
    est.activations = peak;
    est.in_flight_microbatches = stage_layers > 0.0 ? peak_layers / stage_layers : 0.0;
    out.push_back(est);
  }
  return out;
}

MemoryEstimate estimate_memory(const ModelConfig& m, const TrainingConfig& t, const ParallelConfig& p) {
  const std::vector<MemoryEstimate> stages = memory_per_stage(m, t, p);
  return *std::max_element(stages.begin(), stages.end(), [](const MemoryEstimate& a, const MemoryEstimate& b) {
    return a.total() < b.total();
  });
}

}  // namespace trainsim::workload
