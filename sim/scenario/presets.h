#pragma once
// Built-in presets: GPUs (scenarios/hardware/NAME.json) and models
// (scenarios/models/NAME.json), looked up by exact name.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace trainsim::scenario {

enum class PresetKind { kHardware, kModel };

std::vector<std::string> preset_names(PresetKind kind);
// The preset's JSON, or nullopt when there is none of that name.
std::optional<nlohmann::json> find_preset(PresetKind kind, std::string_view name);

}  // namespace trainsim::scenario
