#include "workload/deepspeed_partition.h"

#include <algorithm>
#include <array>
#include <regex>
#include <stdexcept>

#include "workload/parameters.h"

namespace trainsim::workload {

namespace {

// _lprobe: with a bound on each part's weight, cut greedily where the inclusive
// prefix sum first reaches the running target (bisect_left); success when the
// whole list fits in num_parts parts each lighter than `bottleneck`.
std::pair<std::vector<long long>, bool> lprobe(const std::vector<double>& prefix, int num_parts, double bottleneck) {
  const auto num_items = static_cast<long long>(prefix.size());
  const double total_weight = prefix.back();
  std::vector<long long> parts(static_cast<std::size_t>(num_parts) + 1, num_items);
  parts[0] = 0;
  double bsum = bottleneck;
  const long long chunksize = num_items / num_parts;
  long long step = chunksize;
  for (int p = 1; p < num_parts; ++p) {
    while (step < num_items && prefix[static_cast<std::size_t>(step)] < bsum) step += chunksize;
    const long long lo = step - chunksize;
    const long long hi = std::min(step, num_items);
    const auto first = prefix.begin() + lo;
    const auto at = std::lower_bound(first, prefix.begin() + hi, bsum);
    parts[static_cast<std::size_t>(p)] = lo + (at - first);
    if (parts[static_cast<std::size_t>(p)] == num_items) {
      const double part_size = prefix.back() - prefix[static_cast<std::size_t>(parts[static_cast<std::size_t>(p - 1)])];
      return {parts, part_size < bottleneck};
    }
    // Python's weights[parts[p] - 1]: an empty first part reads index -1, the last item.
    const long long last = parts[static_cast<std::size_t>(p)] - 1;
    bsum = (last < 0 ? prefix.back() : prefix[static_cast<std::size_t>(last)]) + bottleneck;
  }
  return {parts, bsum >= total_weight};
}

}  // namespace

std::vector<long long> partition_balanced(const std::vector<double>& weights, int num_parts) {
  if (num_parts < 1) throw std::invalid_argument("partition_balanced: num_parts must be >= 1");
  const auto num_items = static_cast<long long>(weights.size());
  if (num_items <= num_parts) {
    std::vector<long long> parts(static_cast<std::size_t>(num_parts) + 1);
    for (int p = 0; p <= num_parts; ++p) parts[static_cast<std::size_t>(p)] = std::min<long long>(p, num_items);
    return parts;
  }
  std::vector<double> prefix(weights);
  for (std::size_t i = 1; i < prefix.size(); ++i) prefix[i] += prefix[i - 1];
  constexpr double kEps = 1e-3;
  double lower = prefix.back() / num_parts;
  double upper = prefix.back();
  while (upper > lower + kEps) {
    const double mid = lower + ((upper - lower) / 2);
    if (lprobe(prefix, num_parts, mid).second)
      upper = mid;
    else
      lower = mid + kEps;
  }
  auto [parts, success] = lprobe(prefix, num_parts, upper);
  if (!success) throw std::logic_error("partition_balanced: the bisection's bound does not fit");
  return parts;
}

std::vector<long long> deepspeed_stage_layers(const ModelConfig& m, int tensor, int pipeline,
                                              const std::string& method) {
  if (m.is_moe() || m.multi_latent_attention)
    throw std::invalid_argument("DeepSpeed's partition is modeled for Megatron-DeepSpeed's dense GPT pipe");
  const auto layers = static_cast<std::size_t>(m.num_layers);
  // Specs in order: embedding, decoder layers, final norm, output layer.
  std::vector<double> weights(layers + 3, 0.0);
  if (method == "parameters") {
    const ParameterCount c = count_parameters(m);
    const double t = static_cast<double>(tensor);
    // On one rank: the vocabulary and the layers' matrices split t ways (Megatron's
    // vocab-parallel embedding, column- and row-parallel linears), positions and norms whole.
    const double embedding = c.word_embeddings / t + c.position_embeddings;
    weights.front() = embedding;
    for (std::size_t l = 0; l < layers; ++l)
      weights[1 + l] = (c.attention_per_layer + c.mlp_per_layer) / t + c.norms_per_layer;
    weights[layers + 1] = c.final_norm;
    // Tied: the output is the EmbeddingPipe again, and DeepSpeed counts its parameters there too.
    weights.back() = m.untie_embeddings ? c.output_layer / t : embedding;
  } else if (method.starts_with("type:")) {
    std::regex type;
    try {
      type = std::regex(method.substr(5), std::regex::ECMAScript | std::regex::icase);
    } catch (const std::regex_error& e) {
      throw std::invalid_argument("\"" + method.substr(5) + "\" is not a regular expression (" + e.what() + ")");
    }
    const std::array<const char*, 4> names{"EmbeddingPipe", "ParallelTransformerLayerPipe", "MixedFusedLayerNorm",
                                           m.untie_embeddings ? "ColumnParallelLinear" : "EmbeddingPipe"};
    const auto match = [&](const char* name) { return std::regex_search(name, type) ? 1.0 : 0.0; };
    weights.front() = match(names[0]);
    for (std::size_t l = 0; l < layers; ++l) weights[1 + l] = match(names[1]);
    weights[layers + 1] = match(names[2]);
    weights.back() = match(names[3]);
    if (match(names[1]) == 0.0)
      throw std::invalid_argument("\"" + method + "\" matches no decoder layer (ParallelTransformerLayerPipe)");
  } else {
    throw std::invalid_argument("\"" + method + "\" is not modeled: give \"parameters\" or \"type:REGEX\" "
                                "(\"uniform\" counts the pipe's function specs, which differ by version; "
                                "give pipeline_model_parallel_layout instead)");
  }
  const std::vector<long long> parts = partition_balanced(weights, pipeline);
  std::vector<long long> stage_layers(static_cast<std::size_t>(pipeline), 0);
  for (int s = 0; s < pipeline; ++s)
    for (long long i = parts[static_cast<std::size_t>(s)]; i < parts[static_cast<std::size_t>(s) + 1]; ++i)
      if (i >= 1 && i <= static_cast<long long>(layers)) ++stage_layers[static_cast<std::size_t>(s)];
  // The embedding and the output layer sit on the first and last stages (the
  // pipeline's own order); a split that moves them is not one trainsim can run.
  if (parts[1] < 1 || parts[static_cast<std::size_t>(pipeline) - 1] > static_cast<long long>(layers + 2))
    throw std::invalid_argument("the split leaves the embedding off the first stage or the output layer off the last");
  return stage_layers;
}

}  // namespace trainsim::workload
