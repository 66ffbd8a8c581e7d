#pragma once
// Small helpers shared by unit tests: scenarios built from JSON text.
#include <string>

#include "scenario/errors.h"
#include "scenario/reader.h"

namespace trainsim::testing {

// A one-node H100 data-parallel scenario around `model` (a JSON value), with
// optional extra "training"/"parallelism" members.
inline config::Scenario make_scenario(const std::string& model, const std::string& training = "",
                                        const std::string& parallelism = "", int nodes = 1,
                                        const std::string& gpu = "\"H100-SXM5-80GB\"") {
  const std::string text = R"({"cluster": {"gpu": )" + gpu + R"(, "num_nodes": )" + std::to_string(nodes) +
                           R"(}, "model": )" + model + R"(, "training": {"global_batch_size": 64)" +
                           (training.empty() ? "" : ", " + training) + R"(}, "parallelism": {)" + parallelism + "}}";
  return scenario::parse_scenario_text(text, "test.json");
}

// The reader's message for a scenario make_scenario would build, or "(no error)".
inline std::string scenario_error(const std::string& model, const std::string& training = "",
                                  const std::string& parallelism = "") {
  try {
    (void)make_scenario(model, training, parallelism);
  } catch (const scenario::ScenarioError& e) {
    return e.what();
  }
  return "(no error)";
}

// Two small models the unit tests share: a dense one (h 1024, 8 heads, s 512) and
// an MoE one (8 SwiGLU experts of 2048, top-2, no biases).
inline const std::string kDense = R"({"num_layers": 2, "hidden_size": 1024, "num_attention_heads": 8,
                                        "seq_length": 512, "vocab_size": 32000})";
inline const std::string kMoe = R"({"num_layers": 2, "hidden_size": 1024, "ffn_hidden_size": 2048,
                                      "num_attention_heads": 8, "seq_length": 512, "vocab_size": 32000,
                                      "num_experts": 8, "moe_router_topk": 2, "swiglu": true,
                                      "add_bias_linear": false})";

}  // namespace trainsim::testing
