#include "workload/parameters.h"

namespace trainsim::workload {

double qk_norm_parameters(const ModelConfig& m) {
  if (!m.qk_layernorm) return 0.0;
  const double d = static_cast<double>(m.kv_channels);
  return 2.0 * (m.normalization == Normalization::kLayerNorm ? 2.0 * d : d);
}

ParameterCount count_parameters(const ModelConfig& m) {
  const double h = static_cast<double>(m.hidden_size);
  const double f = static_cast<double>(m.ffn_hidden_size);
  const double q = static_cast<double>(m.query_width());
  const double kv = static_cast<double>(m.kv_width());
  const double bias = m.add_bias_linear ? 1.0 : 0.0;
  // LayerNorm has a scale and a shift, RMSNorm only a scale.
  const double norm = m.normalization == Normalization::kLayerNorm ? 2.0 * h : h;

  ParameterCount c;
  c.word_embeddings = static_cast<double>(m.vocab_size) * h;
  c.position_embeddings = m.position_embedding == PositionEmbedding::kLearnedAbsolute
                              ? static_cast<double>(m.max_position_embeddings) * h
                              : 0.0;
  // QKV: h x (q + 2 kv) (+ bias); output projection: q x h (+ bias); QK-norm: one
  // norm over the head dimension d for the queries and one for the keys.
  c.attention_per_layer = h * (q + 2.0 * kv) + bias * (q + 2.0 * kv) + q * h + bias * h + qk_norm_parameters(m);
  // GELU MLP: h x f and f x h; SwiGLU adds the gate (a second h x f). A routed
  // expert is one of width moe_ffn_hidden_size, the shared experts one of width
  // moe_shared_expert_intermediate_size.
  const auto mlp = [&](double width) {
    const double up_width = m.swiglu ? 2.0 * width : width;
    return h * up_width + bias * up_width + width * h + bias * h;
  };
  const double expert = m.is_moe() ? mlp(static_cast<double>(m.expert_ffn())) : mlp(f);
  const double experts = m.is_moe() ? static_cast<double>(m.num_experts) : 1.0;
  const double router = m.is_moe() ? h * static_cast<double>(m.num_experts) : 0.0;
  c.shared_expert_per_layer =
      m.has_shared_expert() ? mlp(static_cast<double>(m.moe_shared_expert_intermediate_size)) : 0.0;
  c.mlp_per_layer = experts * expert + router + c.shared_expert_per_layer;
  c.dense_layers = static_cast<double>(m.num_layers - (m.is_moe() ? m.moe_layers() : 0));
  if (m.is_moe()) c.dense_mlp_per_layer = mlp(f);
  c.norms_per_layer = 2.0 * norm;
  c.final_norm = norm;
  c.output_layer = m.untie_embeddings ? static_cast<double>(m.vocab_size) * h : 0.0;
  const double L = static_cast<double>(m.num_layers);
  const double moe_layers = m.is_moe() ? static_cast<double>(m.moe_layers()) : L;
  c.layers = L * (c.attention_per_layer + c.norms_per_layer) + moe_layers * c.mlp_per_layer +
             (m.is_moe() ? c.dense_layers * c.dense_mlp_per_layer : 0.0);
  c.total = c.word_embeddings + c.position_embeddings + c.layers + c.final_norm + c.output_layer;
  const double active_experts = m.is_moe() ? static_cast<double>(m.moe_router_topk) : 1.0;
  c.active_per_token = c.total - moe_layers * (experts - active_experts) * expert;
  return c;
}

}  // namespace trainsim::workload
