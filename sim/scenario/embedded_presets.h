#pragma once
// The preset files of scenarios/hardware and scenarios/models, compiled in
// (see cmake/EmbedPresets.cmake). Keys: "hardware/H100-SXM5-80GB.json", ...
#include <map>
#include <string_view>

namespace trainsim::scenario {

const std::map<std::string_view, std::string_view>& embedded_presets();

}  // namespace trainsim::scenario
