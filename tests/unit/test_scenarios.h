#pragma once
// Small helpers shared by unit tests: scenarios built from JSON text.
#include <string>

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

}  // namespace trainsim::testing
