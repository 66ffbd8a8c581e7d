#pragma once
// DeepSpeed's pipeline partition (partition_method of deepspeed.pipe.PipelineModule;
// Megatron-DeepSpeed's --pp-partition-method; docs/strategies.md, "Uneven pipeline
// stages"). DeepSpeed splits the list of layer specs, not the decoder layers: for
// Megatron-DeepSpeed's GPTModelPipe, the embedding (EmbeddingPipe), the decoder
// layers (ParallelTransformerLayerPipe), the final norm (MixedFusedLayerNorm) and the
// output layer (the tied EmbeddingPipe again, or a separate linear when untied).
// Each spec gets a weight, and partition_balanced() cuts the list into stages whose
// heaviest is as light as it can be:
//   "parameters" (DeepSpeed's default): the spec's trainable parameters on a rank;
//   "type:REGEX": 1 for a spec whose class name REGEX matches (case-insensitive
//                 search), else 0 (BLOOM: "type:transformer|embedding").
// The embedding stays on the first stage and the output layer on the last.
#include <string>
#include <vector>

#include "workload/model_config.h"

namespace trainsim::workload {

// deepspeed/runtime/utils.py partition_balanced(weights, num_parts, eps=1e-3): the
// num_parts + 1 boundaries (parts[p] .. parts[p+1] - 1 are part p's items), found
// by a bisection on the heaviest part's weight (_rb_partition_balanced) and a greedy
// probe over the inclusive prefix sums (_lprobe), in the same double arithmetic.
// Fewer items than parts: partition_uniform's boundaries min(p, items).
std::vector<long long> partition_balanced(const std::vector<double>& weights, int num_parts);

// Decoder layers per pipeline stage of `m` split by `method` over `pipeline` stages
// on ranks of `tensor` tensor-parallel ranks. Throws std::invalid_argument with the
// reason for a method it does not model ("uniform", which counts the pipe's
// parameterless function specs, is one) or a regular expression that does not parse.
std::vector<long long> deepspeed_stage_layers(const ModelConfig& m, int tensor, int pipeline,
                                              const std::string& method);

}  // namespace trainsim::workload
