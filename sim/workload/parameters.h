#pragma once
// Parameter counts of a ModelConfig, by part (docs/model.md, "Parameters").
#include "workload/model_config.h"

namespace trainsim::workload {

struct ParameterCount {
  double word_embeddings = 0;      // V h
  double position_embeddings = 0;  // max_position_embeddings h (learned positions only)
  double attention_per_layer = 0;  // QKV and output projections with biases
  double mlp_per_layer = 0;        // all experts, the shared experts and the router for MoE
  double shared_expert_per_layer = 0;  // MoE: the shared experts' MLP (part of mlp_per_layer)
  // A dense layer's MLP in a model that mixes dense and MoE layers (moe_layer_pattern);
  // mlp_per_layer is then an MoE layer's.
  double dense_mlp_per_layer = 0;
  double dense_layers = 0;  // how many layers have the dense MLP
  double norms_per_layer = 0;
  double final_norm = 0;
  double output_layer = 0;  // V h when untied, else 0 (shared with the embedding)
  double layers = 0;        // num_layers * (attention + norms) + each layer's MLP
  double total = 0;
  // Parameters one token passes through (MoE: top-k experts instead of all).
  double active_per_token = 0;
};

ParameterCount count_parameters(const ModelConfig& m);

// qk_layernorm's weights in one layer: a norm over the head dimension for the queries
// and one for the keys (LayerNorm: scale and shift; RMSNorm: scale), shared by the heads
// and whole on every tensor-parallel rank; 0 without it.
double qk_norm_parameters(const ModelConfig& m);

// Attention sinks (softmax_type "learnable"): one logit per head in a layer, split
// with the heads over the tensor-parallel ranks; 0 otherwise.
double softmax_offset_parameters(const ModelConfig& m);

// One layer's attention weights: QKV and output projections with their biases and
// qk_layernorm's norms, or multi-head latent attention's projections and norms.
double attention_parameters(const ModelConfig& m);

// Multi-head latent attention's down projections (h -> q_lora_rank and h ->
// kv_lora_rank + qk_pos_emb_head_dim) with their biases: whole on every
// tensor-parallel rank (Megatron-Core builds them duplicated); 0 without MLA.
double mla_down_projection_parameters(const ModelConfig& m);

}  // namespace trainsim::workload
