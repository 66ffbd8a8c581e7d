// Parses "model" (a preset name, an inline description, or a preset with
// overrides) into workload::ModelConfig, with Megatron-LM's argument names.
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "scenario/errors.h"
#include "scenario/parse_sections.h"

namespace trainsim::scenario {

namespace {

constexpr long long kMaxLayers = 100'000;
constexpr long long kMaxWidth = 10'000'000;
constexpr long long kMaxSeq = 100'000'000;
constexpr long long kMaxVocab = 100'000'000;

// Which layers are MoE layers: Megatron-Core's moe_layer_freq (an integer N: layer i
// is MoE when i % N == 0; or a list of 0/1, one per layer) or DeepSeek's
// first_k_dense_replace (the first k layers dense, the rest MoE). Empty: all MoE.
// Multi-head latent attention's keys, with Megatron-Core's defaults; each needs
// multi_latent_attention, which has no query groups.
void read_latent_attention(const ObjectReader& m, workload::ModelConfig& c) {
  c.multi_latent_attention = m.boolean("multi_latent_attention", false);
  for (const char* key : {"q_lora_rank", "kv_lora_rank", "qk_head_dim", "qk_pos_emb_head_dim", "v_head_dim"})
    if (m.has_non_null(key) && !c.multi_latent_attention)
      m.fail_message(key, std::string(key) + " needs \"multi_latent_attention\": true");
  if (!c.multi_latent_attention) return;
  if (c.num_query_groups != c.num_attention_heads)
    m.fail_message("num_query_groups", fmt::format("multi_latent_attention has no query groups: num_query_groups "
                                                   "({}) must equal num_attention_heads ({}) or be left out",
                                                   c.num_query_groups, c.num_attention_heads));
  c.q_lora_rank = m.integer("q_lora_rank", 0, kMaxWidth, 0);
  c.kv_lora_rank = m.integer("kv_lora_rank", 1, kMaxWidth, 32);
  c.qk_head_dim = m.integer("qk_head_dim", 1, kMaxWidth, 128);
  c.qk_pos_emb_head_dim = m.integer("qk_pos_emb_head_dim", 0, kMaxWidth, 64);
  c.v_head_dim = m.integer("v_head_dim", 1, kMaxWidth, 128);
}

// Sliding-window attention as Megatron-Core's window_size ((left, right), -1 an
// infinite side; causal training needs right 0) and window_attn_skip_freq (an
// integer N: layer number n, 1-based, is windowed unless n % N == 0; or a list, 1
// windowed, 0 full, one per layer).
void read_attention_window(const ObjectReader& m, workload::ModelConfig& c) {
  if (!m.has_non_null("window_size")) {
    if (m.has_non_null("window_attn_skip_freq"))
      m.fail_message("window_attn_skip_freq", "window_attn_skip_freq needs window_size");
    return;
  }
  const nlohmann::json& given = m.raw("window_size");
  const std::string expected = "[left, 0] (tokens before each query; -1: no window) or an integer left";
  long long left = 0;
  if (given.is_number_integer()) {
    left = given.get<long long>();
  } else if (given.is_array() && given.size() == 2 && given[0].is_number_integer() && given[1].is_number_integer()) {
    left = given[0].get<long long>();
    if (given[1].get<long long>() != 0)
      m.fail_message("window_size", fmt::format("window_size's right side ({}) lets queries see later tokens; causal "
                                                "training needs 0", given[1].get<long long>()));
  } else {
    m.fail("window_size", expected, given);
  }
  if (left == -1) return;  // an infinite window: full attention
  if (left < 1) m.fail("window_size", expected, given);
  c.attention_window = left;
  if (!m.has_non_null("window_attn_skip_freq")) return;
  const auto layers = static_cast<std::size_t>(c.num_layers);
  c.window_layer_pattern.assign(layers, true);
  const nlohmann::json& freq = m.raw("window_attn_skip_freq");
  if (freq.is_number_integer()) {
    const long long every = m.integer("window_attn_skip_freq", 1, c.num_layers);
    for (std::size_t l = 0; l < layers; ++l) c.window_layer_pattern[l] = static_cast<long long>(l + 1) % every != 0;
    return;
  }
  const std::string list = fmt::format("an integer from 1 to {} or a list of {} zeros and ones (1: windowed)",
                                       c.num_layers, c.num_layers);
  if (!freq.is_array() || freq.size() != layers) m.fail("window_attn_skip_freq", list, freq);
  for (std::size_t l = 0; l < layers; ++l) {
    if (!freq[l].is_number_integer() || (freq[l].get<long long>() != 0 && freq[l].get<long long>() != 1))
      m.fail("window_attn_skip_freq", list, freq);
    c.window_layer_pattern[l] = freq[l].get<long long>() == 1;
  }
}

std::vector<bool> moe_layer_pattern(const ObjectReader& m, const workload::ModelConfig& c) {
  const bool freq = m.has_non_null("moe_layer_freq");
  const bool first_k = m.has_non_null("first_k_dense_replace");
  if (!freq && !first_k) return {};
  const char* key = freq ? "moe_layer_freq" : "first_k_dense_replace";
  if (!c.is_moe()) m.fail_message(key, std::string(key) + " needs num_experts of 2 or more");
  if (freq && first_k)
    m.fail_message("first_k_dense_replace", "give moe_layer_freq or first_k_dense_replace, not both");
  const auto layers = static_cast<std::size_t>(c.num_layers);
  std::vector<bool> pattern(layers, true);
  if (first_k) {
    const long long k = m.integer("first_k_dense_replace", 0, c.num_layers - 1);
    for (long long l = 0; l < k; ++l) pattern[static_cast<std::size_t>(l)] = false;
    return pattern;
  }
  const nlohmann::json& given = m.raw("moe_layer_freq");
  if (given.is_number_integer()) {
    const long long every = m.integer("moe_layer_freq", 1, c.num_layers);
    for (std::size_t l = 0; l < layers; ++l) pattern[l] = static_cast<long long>(l) % every == 0;
    return pattern;
  }
  const std::string expected = fmt::format("an integer from 1 to {} or a list of {} zeros and ones, one per layer",
                                           c.num_layers, c.num_layers);
  if (!given.is_array() || given.size() != layers) m.fail("moe_layer_freq", expected, given);
  for (std::size_t l = 0; l < layers; ++l) {
    const nlohmann::json& v = given[l];
    if (!v.is_number_integer() || (v.get<long long>() != 0 && v.get<long long>() != 1))
      m.fail("moe_layer_freq", expected, given);
    pattern[l] = v.get<long long>() == 1;
  }
  if (std::none_of(pattern.begin(), pattern.end(), [](bool moe) { return moe; }))
    m.fail_message("moe_layer_freq", "moe_layer_freq makes every layer dense: set num_experts to 0 instead");
  return pattern;
}

}  // namespace

workload::ModelConfig parse_model(const ObjectReader& root) {
  using workload::ModelConfig;
  nlohmann::json model_json = resolve_preset(root, "model", PresetKind::kModel);
  // Presets spell keys in full; an override spelled with an alias replaces the
  // preset's value rather than clashing with it as "both given".
  const std::vector<std::pair<std::string_view, std::string_view>> aliases{
      {"untie_embeddings_and_output_weights", "untie_embeddings"}};
  if (const nlohmann::json& given = root.raw("model"); given.is_object() && given.contains("preset"))
    for (const auto& [alias, full] : aliases)
      if (given.contains(alias) && !given.contains(full)) model_json.erase(std::string(full));
  const ObjectReader m(model_json, root.file(), root.path_of("model"),
                       {"name", "num_layers", "hidden_size", "ffn_hidden_size", "num_attention_heads",
                        "num_query_groups", "kv_channels", "seq_length", "max_position_embeddings", "vocab_size",
                        "num_experts", "moe_router_topk", "moe_expert_capacity_factor", "moe_token_dispatcher_type", "moe_ffn_hidden_size",
                        "moe_shared_expert_intermediate_size", "moe_layer_freq", "first_k_dense_replace",
                        "multi_latent_attention", "q_lora_rank", "kv_lora_rank", "qk_head_dim", "qk_pos_emb_head_dim",
                        "v_head_dim", "window_size", "window_attn_skip_freq", "softmax_type", "swiglu", "squared_relu", "rotary_percent", "apply_layernorm_1p", "untie_embeddings", "normalization",
                        "position_embedding_type", "add_bias_linear", "qk_layernorm", "hidden_dropout",
                        "attention_dropout",
                        "published_parameters", "source", "preset"},
                       aliases);
  ModelConfig c;
  c.name = m.text("name", root.raw("model").is_string() ? root.raw("model").get<std::string>() : "custom model");
  c.num_layers = m.integer("num_layers", 1, kMaxLayers);
  c.hidden_size = m.integer("hidden_size", 1, kMaxWidth);
  c.num_attention_heads = m.integer("num_attention_heads", 1, kMaxWidth);
  c.ffn_hidden_size = m.integer("ffn_hidden_size", 1, kMaxWidth * 8, 4 * c.hidden_size);
  c.num_query_groups = m.integer("num_query_groups", 1, c.num_attention_heads, c.num_attention_heads);
  if (c.num_attention_heads % c.num_query_groups != 0)
    m.fail_message("num_query_groups", fmt::format("num_query_groups ({}) must divide num_attention_heads ({})",
                                                   c.num_query_groups, c.num_attention_heads));
  if (!m.has_non_null("kv_channels") && c.hidden_size % c.num_attention_heads != 0)
    m.fail_message("num_attention_heads",
                   fmt::format("num_attention_heads ({}) must divide hidden_size ({}) unless kv_channels is given",
                               c.num_attention_heads, c.hidden_size));
  c.kv_channels = m.integer("kv_channels", 1, kMaxWidth, c.hidden_size / c.num_attention_heads);
  c.seq_length = m.integer("seq_length", 1, kMaxSeq);
  c.vocab_size = m.integer("vocab_size", 1, kMaxVocab);
  c.swiglu = m.boolean("swiglu", false);
  c.squared_relu = m.boolean("squared_relu", false);
  if (c.swiglu && c.squared_relu) m.fail_message("squared_relu", "squared_relu and swiglu are two MLP activations: set one");
  c.untie_embeddings = m.boolean("untie_embeddings", false);
  c.normalization = m.choice("normalization", {"LayerNorm", "RMSNorm"}, "LayerNorm") == "RMSNorm"
                        ? workload::Normalization::kRmsNorm
                        : workload::Normalization::kLayerNorm;
  c.position_embedding = m.choice("position_embedding_type", {"learned_absolute", "rope"}, "learned_absolute") == "rope"
                             ? workload::PositionEmbedding::kRope
                             : workload::PositionEmbedding::kLearnedAbsolute;
  c.rotary_percent = m.number("rotary_percent", 1e-9, 1.0, 1.0);
  if (m.has_non_null("rotary_percent") && c.position_embedding != workload::PositionEmbedding::kRope)
    m.fail_message("rotary_percent", "rotary_percent needs \"position_embedding_type\": \"rope\"");
  c.apply_layernorm_1p = m.boolean("apply_layernorm_1p", false);
  if (c.apply_layernorm_1p && c.normalization != workload::Normalization::kLayerNorm)
    m.fail_message("apply_layernorm_1p", "apply_layernorm_1p needs \"normalization\": \"LayerNorm\"");
  c.max_position_embeddings = m.integer("max_position_embeddings", 1, kMaxSeq, c.seq_length);
  if (c.position_embedding == workload::PositionEmbedding::kLearnedAbsolute && c.seq_length > c.max_position_embeddings)
    m.fail_message("seq_length", fmt::format("seq_length ({}) exceeds max_position_embeddings ({}) of learned "
                                             "position embeddings",
                                             c.seq_length, c.max_position_embeddings));
  c.add_bias_linear = m.boolean("add_bias_linear", true);
  c.qk_layernorm = m.boolean("qk_layernorm", false);
  read_latent_attention(m, c);
  read_attention_window(m, c);
  c.learnable_softmax_offset = m.choice("softmax_type", {"vanilla", "off-by-one", "learnable"}, "vanilla") == "learnable";
  c.hidden_dropout = m.number("hidden_dropout", 0.0, 0.99, 0.1);
  c.attention_dropout = m.number("attention_dropout", 0.0, 0.99, 0.1);
  c.num_experts = m.integer("num_experts", 0, 100'000, 0);
  if (c.num_experts == 1) c.num_experts = 0;  // one expert is a dense MLP
  c.moe_router_topk = m.integer("moe_router_topk", 1, 100'000, 2);
  if (c.is_moe() && c.moe_router_topk > c.num_experts)
    m.fail_message("moe_router_topk", fmt::format("moe_router_topk ({}) exceeds num_experts ({})",
                                                  c.moe_router_topk, c.num_experts));
  if (m.has_non_null("moe_expert_capacity_factor")) {
    if (!c.is_moe())
      m.fail_message("moe_expert_capacity_factor", "moe_expert_capacity_factor needs num_experts of 2 or more");
    c.moe_expert_capacity_factor = m.number("moe_expert_capacity_factor", 1.0, 1000.0);
  }
  if (m.has_non_null("moe_token_dispatcher_type")) {
    const std::string dispatcher = m.choice("moe_token_dispatcher_type", {"alltoall", "flex", "allgather"}, "alltoall");
    if (!c.is_moe())
      m.fail_message("moe_token_dispatcher_type", "moe_token_dispatcher_type needs num_experts of 2 or more");
    if (dispatcher == "allgather")
      m.fail_message("moe_token_dispatcher_type",
                     "moe_token_dispatcher_type \"allgather\" (MoEAllGatherTokenDispatcher: every rank gathers all "
                     "tokens of its expert-parallel group) is not modeled yet; \"alltoall\" and \"flex\" are");
    c.moe_token_dispatcher =
        dispatcher == "flex" ? workload::ModelConfig::MoeDispatcher::kFlex : workload::ModelConfig::MoeDispatcher::kAllToAll;
  }
  for (const char* key : {"moe_ffn_hidden_size", "moe_shared_expert_intermediate_size"})
    if (m.has_non_null(key) && !c.is_moe()) m.fail_message(key, std::string(key) + " needs num_experts of 2 or more");
  c.moe_ffn_hidden_size = m.integer("moe_ffn_hidden_size", 1, kMaxWidth * 8, c.ffn_hidden_size);
  c.moe_shared_expert_intermediate_size = m.integer("moe_shared_expert_intermediate_size", 0, kMaxWidth * 8, 0);
  c.moe_layer_pattern = moe_layer_pattern(m, c);
  if (m.has_non_null("published_parameters")) c.published_parameters = m.number("published_parameters", 1.0, 1e16);
  c.source = m.text("source", "");
  return c;
}

}  // namespace trainsim::scenario
