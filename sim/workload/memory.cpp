#include "workload/memory.h"

#include "workload/parameters.h"

namespace trainsim::workload {

namespace {
constexpr double kMask = 1.0;  // a dropout mask element is one byte

double activation_element_bytes(const TrainingConfig& t) {
  return t.precision == hw::Precision::kFp32 || t.precision == hw::Precision::kTf32 ? 4.0 : 2.0;
}
}  // namespace

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

double layer_activation_bytes(const ModelConfig& m, const TrainingConfig& t, Recompute r, long long micro_batch) {
  const double e = activation_element_bytes(t);
  const double b = static_cast<double>(micro_batch);
  const double s = static_cast<double>(m.seq_length);
  const double sb = s * b;
  const double h = static_cast<double>(m.hidden_size);
  if (r == Recompute::kFull) return e * sb * h;  // only the layer's input (Korthikanti: 2sbh)

  const double q = static_cast<double>(m.query_width());
  const double kv = static_cast<double>(m.kv_width());
  const double f = static_cast<double>(m.ffn_hidden_size);
  const double a = static_cast<double>(m.num_attention_heads);
  const double hidden_mask = m.hidden_dropout > 0.0 ? kMask * sb * h : 0.0;

  // Attention block (Korthikanti et al. 2022, section 4.1: 11 sbh + 5 a s^2 b for
  // MHA with dropout): QKV input, Q and K, V, output-projection input, dropout mask.
  double attention = e * sb * h + e * sb * (q + kv) + e * sb * kv + e * sb * q + hidden_mask;
  const bool flash = t.attention_backend == AttentionBackend::kFlash;
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
  if (!m.is_moe()) {
    mlp = e * sb * h + e * sb * up + e * sb * f + hidden_mask;
  } else {
    const double k = static_cast<double>(m.moe_router_topk);
    const double experts = static_cast<double>(m.num_experts);
    // Router input and fp32 logits, then the k dispatched copies of each token.
    mlp = e * sb * h + 4.0 * sb * experts + k * (e * sb * h + e * sb * up + e * sb * f) + hidden_mask;
  }
  const double norms = 2.0 * e * sb * h;  // the inputs of both norms (4 sbh)
  return attention + mlp + norms;
}

double outside_layers_activation_bytes(const ModelConfig& m, const TrainingConfig& t, long long micro_batch) {
  const double e = activation_element_bytes(t);
  const double sb = static_cast<double>(m.seq_length) * static_cast<double>(micro_batch);
  const double h = static_cast<double>(m.hidden_size);
  const double v = static_cast<double>(m.vocab_size);
  // Korthikanti et al. section 4.3: embedding dropout mask, final norm input,
  // output-layer input, and the fp32 softmax kept by the cross-entropy loss.
  const double embedding_mask = m.hidden_dropout > 0.0 ? kMask * sb * h : 0.0;
  return embedding_mask + 2.0 * e * sb * h + 4.0 * sb * v;
}

MemoryEstimate estimate_memory(const ModelConfig& m, const TrainingConfig& t, const ParallelConfig& p) {
  const double n = count_parameters(m).total;
  const StateBytes per = state_bytes_per_parameter(t);
  MemoryEstimate est;
  est.weights = per.weights * n;
  est.gradients = per.gradients * n;
  est.optimizer_states = per.optimizer * n;

  // With one pipeline stage, micro-batches run one after another and each frees
  // its activations in its backward pass, so one micro-batch's worth is the peak.
  const double layers = static_cast<double>(m.num_layers);
  double act = layers * layer_activation_bytes(m, t, p.recompute, t.micro_batch_size) +
               outside_layers_activation_bytes(m, t, t.micro_batch_size);
  if (p.recompute == Recompute::kFull) {
    // During a layer's backward its recomputed activations are alive too.
    act += layer_activation_bytes(m, t, Recompute::kNone, t.micro_batch_size);
  }
  est.activations = act;
  return est;
}

}  // namespace trainsim::workload
