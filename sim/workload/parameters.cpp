#include "workload/parameters.h"

namespace trainsim::workload {

namespace {

// A norm's weights over `width` elements: LayerNorm a scale and a shift, RMSNorm a scale.
double norm_weights(const ModelConfig& m, double width) {
  return m.normalization == Normalization::kLayerNorm ? 2.0 * width : width;
}

}  // namespace

double qk_norm_parameters(const ModelConfig& m) {
  if (!m.qk_layernorm) return 0.0;
  if (m.multi_latent_attention)
    return norm_weights(m, static_cast<double>(m.q_lora_rank)) + norm_weights(m, static_cast<double>(m.kv_lora_rank));
  return 2.0 * norm_weights(m, static_cast<double>(m.kv_channels));
}

double softmax_offset_parameters(const ModelConfig& m) {
  return m.learnable_softmax_offset ? static_cast<double>(m.num_attention_heads) : 0.0;
}

double mla_down_projection_parameters(const ModelConfig& m) {
  if (!m.multi_latent_attention) return 0.0;
  const double h = static_cast<double>(m.hidden_size);
  const double bias = m.add_bias_linear ? 1.0 : 0.0;
  const double q_lora = static_cast<double>(m.q_lora_rank);
  const double kv_down = static_cast<double>(m.kv_lora_rank + m.qk_pos_emb_head_dim);
  return (h + bias) * q_lora + (h + bias) * kv_down;
}

double attention_parameters(const ModelConfig& m) {
  const double h = static_cast<double>(m.hidden_size);
  const double bias = m.add_bias_linear ? 1.0 : 0.0;
  if (!m.multi_latent_attention) {
    // QKV: h x (q + 2kv) (+ bias); output projection: q x h (+ bias).
    const double q = static_cast<double>(m.query_width());
    const double kv = static_cast<double>(m.kv_width());
    return h * (q + 2.0 * kv) + bias * (q + 2.0 * kv) + q * h + bias * h + qk_norm_parameters(m) +
           softmax_offset_parameters(m);
  }
  // MLA: the down projections (h -> q_lora, h -> kv_lora + d_r), the up projections
  // (q_lora -> H (d_qk + d_r), or h -> that without q_lora; kv_lora -> H (d_qk + d_v)),
  // the output projection H d_v -> h, and the latents' norms.
  const double heads = static_cast<double>(m.num_attention_heads);
  const double qk = heads * static_cast<double>(m.qk_head_dim + m.qk_pos_emb_head_dim);
  const double kv_up = heads * static_cast<double>(m.qk_head_dim + m.v_head_dim);
  const double q_in = m.q_lora_rank > 0 ? static_cast<double>(m.q_lora_rank) : h;
  const double v = static_cast<double>(m.attention_v_width());
  return mla_down_projection_parameters(m) + (q_in + bias) * qk + (static_cast<double>(m.kv_lora_rank) + bias) * kv_up +
         v * h + bias * h + qk_norm_parameters(m) + softmax_offset_parameters(m);
}

ParameterCount count_parameters(const ModelConfig& m) {
  const double h = static_cast<double>(m.hidden_size);
  const double f = static_cast<double>(m.ffn_hidden_size);
  const double bias = m.add_bias_linear ? 1.0 : 0.0;
  // LayerNorm has a scale and a shift, RMSNorm only a scale.
  const double norm = m.normalization == Normalization::kLayerNorm ? 2.0 * h : h;

  ParameterCount c;
  c.word_embeddings = static_cast<double>(m.vocab_size) * h;
  c.position_embeddings = m.position_embedding == PositionEmbedding::kLearnedAbsolute
                              ? static_cast<double>(m.max_position_embeddings) * h
                              : 0.0;
  c.attention_per_layer = attention_parameters(m);
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
