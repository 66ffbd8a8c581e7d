#pragma once
// Reads the simulator's recorded error on the validation corpus (config/
// model_error.h): scenarios/accuracy/model_error.json, compiled in with the presets.
#include <string>

#include <nlohmann/json.hpp>

#include "config/model_error.h"

namespace trainsim::scenario {

// A record's JSON ({"format": "trainsim-model-error", "version": 1, "cases",
// "ratio_p10", "ratio_p50", "ratio_p90", "recorded_with", ...}); a wrong one is a
// ScenarioError naming `file` and the field.
config::ModelErrorRecord parse_model_error(const nlohmann::json& j, const std::string& file);

// The record this binary ships (scenarios/accuracy/model_error.json as built in).
const config::ModelErrorRecord& shipped_model_error();

}  // namespace trainsim::scenario
