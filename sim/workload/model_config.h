#pragma once
// A decoder-only transformer described by its hyperparameters, with
// Megatron-LM's names (GPT and Llama styles: learned or rotary positions,
// LayerNorm or RMSNorm, GELU MLP or SwiGLU, MHA or GQA, tied or untied
// embeddings, dense or mixture-of-experts MLP).
#include <optional>
#include <string>
#include <vector>

namespace trainsim::workload {

enum class Normalization { kLayerNorm, kRmsNorm };
enum class PositionEmbedding { kLearnedAbsolute, kRope };

struct ModelConfig {
  std::string name;
  long long num_layers = 0;
  long long hidden_size = 0;
  long long ffn_hidden_size = 0;
  long long num_attention_heads = 0;
  long long num_query_groups = 0;  // = num_attention_heads for multi-head attention
  long long kv_channels = 0;       // head dimension; hidden_size / num_attention_heads by default
  long long seq_length = 0;
  long long max_position_embeddings = 0;
  long long vocab_size = 0;
  long long num_experts = 0;  // 0: dense MLP
  long long moe_router_topk = 2;
  // Megatron-LM's moe_expert_capacity_factor with padding to capacity: every
  // expert computes c times its balanced share; none: dropless and balanced.
  std::optional<double> moe_expert_capacity_factor;
  // Megatron-Core's moe_token_dispatcher_type: "alltoall" (MoEAlltoAllTokenDispatcher)
  // sorts the received tokens by local expert after the dispatch and back before the
  // combine when the rank holds more than one expert; "flex" (DeepEP, HybridEP) permutes
  // inside its dispatch and combine kernels (docs/model.md, "Context and expert
  // parallelism").
  enum class MoeDispatcher { kAllToAll, kFlex };
  MoeDispatcher moe_token_dispatcher = MoeDispatcher::kAllToAll;
  // Megatron-Core's moe_ffn_hidden_size: one routed expert's FFN width; 0: ffn_hidden_size.
  long long moe_ffn_hidden_size = 0;
  // Megatron-Core's moe_shared_expert_intermediate_size: the FFN width of the shared
  // experts every token passes through beside its routed ones (DeepSeek-V2/V3,
  // Qwen2-MoE, Llama 4), all of them together; 0: none.
  long long moe_shared_expert_intermediate_size = 0;
  // Which layers are MoE layers (Megatron-Core's moe_layer_freq as a list; DeepSeek's
  // first_k_dense_replace): 1 MoE, 0 a dense MLP of ffn_hidden_size; empty: every
  // layer of an MoE model.
  std::vector<bool> moe_layer_pattern;
  bool swiglu = false;
  // Megatron-LM's squared_relu: a non-gated MLP with relu(x)^2 (Nemotron-4; So et
  // al. 2021, Primer). Same weights and traffic as GELU; no measured kernel of ours.
  bool squared_relu = false;
  // Megatron-LM's rotary_percent: the share of each head's dimensions rotated by RoPE
  // (Nemotron-4: 0.5). The unfused rotary ops compute on that share; the fused
  // kernel reads and writes every element (TransformerOps::rotary_embedding).
  double rotary_percent = 1.0;
  // Megatron-LM's apply_layernorm_1p: LayerNorm scaled by 1 + gamma (Nemotron).
  // Same weights and kernel as LayerNorm.
  bool apply_layernorm_1p = false;
  bool untie_embeddings = false;
  Normalization normalization = Normalization::kLayerNorm;
  PositionEmbedding position_embedding = PositionEmbedding::kLearnedAbsolute;
  bool add_bias_linear = true;
  // Megatron-Core's qk_layernorm: the queries and keys normalized per head (of the
  // model's normalization, over kv_channels) after the QKV projection (Qwen3, OLMo 2).
  bool qk_layernorm = false;
  // Multi-head latent attention (DeepSeek-V2, section 2.1; Megatron-Core's
  // multi_latent_attention with its keys and defaults): queries through a low-rank
  // q_lora_rank projection (0: projected directly from h), keys and values through a
  // shared kv_lora_rank latent, each head's query and key of qk_head_dim plus a
  // decoupled rotary part of qk_pos_emb_head_dim, values of v_head_dim. With it,
  // qk_layernorm means the norms of the two latents (q_layernorm, kv_layernorm).
  bool multi_latent_attention = false;
  long long q_lora_rank = 0;
  long long kv_lora_rank = 32;
  long long qk_head_dim = 128;
  long long qk_pos_emb_head_dim = 64;
  long long v_head_dim = 128;
  // Sliding-window attention (Megatron-Core's window_size (left, 0) and
  // window_attn_skip_freq; GPT-OSS, Mistral): a query attends to itself and the
  // `attention_window` tokens before it, on the windowed layers; 0: full causal
  // attention everywhere. window_layer_pattern: per layer, true when windowed
  // (empty: every layer, when a window is set).
  long long attention_window = 0;
  std::vector<bool> window_layer_pattern;
  // Megatron-Core's softmax_type "learnable": a learned logit per head that takes
  // part in the softmax (attention sinks, GPT-OSS): num_attention_heads weights per layer.
  bool learnable_softmax_offset = false;
  double hidden_dropout = 0.1;
  double attention_dropout = 0.1;
  std::optional<double> published_parameters;  // from the preset's source
  std::string source;

  [[nodiscard]] bool is_moe() const { return num_experts > 1; }
  [[nodiscard]] long long expert_ffn() const { return moe_ffn_hidden_size > 0 ? moe_ffn_hidden_size : ffn_hidden_size; }
  [[nodiscard]] bool has_shared_expert() const { return is_moe() && moe_shared_expert_intermediate_size > 0; }
  // Whether decoder layer `layer` (0-based) has the MoE MLP.
  [[nodiscard]] bool is_moe_layer(long long layer) const {
    if (!is_moe()) return false;
    if (moe_layer_pattern.empty()) return true;
    return moe_layer_pattern.at(static_cast<std::size_t>(layer));
  }
  // How many layers have the MoE MLP.
  [[nodiscard]] long long moe_layers() const {
    if (!is_moe()) return 0;
    if (moe_layer_pattern.empty()) return num_layers;
    long long n = 0;
    for (const bool moe : moe_layer_pattern) n += moe ? 1 : 0;
    return n;
  }
  // Whether decoder layer `layer` (0-based) attends within a sliding window.
  [[nodiscard]] bool is_window_layer(long long layer) const {
    if (attention_window <= 0) return false;
    if (window_layer_pattern.empty()) return true;
    return window_layer_pattern.at(static_cast<std::size_t>(layer));
  }
  // Query-key pairs one sequence of s tokens attends to per head in a windowed
  // layer: each query itself and up to w keys before it.
  [[nodiscard]] double window_pairs(double s) const {
    const double w = static_cast<double>(attention_window);
    if (s <= w + 1.0) return s * (s + 1.0) / 2.0;
    return (w + 1.0) * (w + 2.0) / 2.0 + (s - w - 1.0) * (w + 1.0);
  }
  // Whether the layers mix dense and MoE MLPs.
  [[nodiscard]] bool mixes_layers() const { return moe_layers() != 0 && moe_layers() != num_layers; }
  [[nodiscard]] long long query_width() const { return num_attention_heads * kv_channels; }
  [[nodiscard]] long long kv_width() const { return num_query_groups * kv_channels; }
  // Attention's widths over all heads: the queries and keys that QK^T reads, and the
  // values and the output that AV writes (the output projection's input).
  [[nodiscard]] long long attention_qk_width() const {
    return multi_latent_attention ? num_attention_heads * (qk_head_dim + qk_pos_emb_head_dim) : query_width();
  }
  [[nodiscard]] long long attention_v_width() const {
    return multi_latent_attention ? num_attention_heads * v_head_dim : query_width();
  }
};

}  // namespace trainsim::workload
