#pragma once
// Reads a strategy-sweep spec (docs/sweep.md) into config::SweepSpec: its space
// of layouts, its objective, and its cluster options, each read by the scenario
// reader (parse_scenario_base) with the spec's model, training and sections.
#include <filesystem>
#include <string>
#include <string_view>

#include "config/sweep_spec.h"

namespace trainsim::scenario {

// Throws ScenarioError naming the file, the JSON path, what was
// expected and what was found (clusters are read by the scenario reader).
config::SweepSpec read_sweep_spec(const std::filesystem::path& path);
config::SweepSpec parse_sweep_spec(std::string_view text, const std::string& file);

}  // namespace trainsim::scenario
