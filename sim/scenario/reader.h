#pragma once
// Reads scenario files (DESIGN.md, "Scenario file") into typed Scenarios.
#include <filesystem>
#include <string>
#include <string_view>

#include "scenario/scenario.h"

namespace trainsim::scenario {

// Throws ScenarioError (or NotSupportedYet) naming the file, the JSON path, what
// was expected and what was found.
Scenario read_scenario_file(const std::filesystem::path& path);
// `file` names the source in messages.
Scenario parse_scenario_text(std::string_view text, const std::string& file);

}  // namespace trainsim::scenario
