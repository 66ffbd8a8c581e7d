#pragma once
// Reads scenario files (DESIGN.md, "Scenario file") into typed Scenarios.
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "config/scenario.h"

namespace trainsim::scenario {

struct ReadOptions {
  // A calibration profile to use instead of the scenario's "calibration" key
  // (trainsim run --calibration); the key's file is then not read.
  std::optional<std::filesystem::path> calibration;
};

// Throws ScenarioError (or NotSupportedYet) naming the file, the JSON path, what
// was expected and what was found. A "calibration" path is relative to the
// scenario file's folder; the profile is read and checked against the cluster's
// GPU (scenario/calibration_reader.h).
config::Scenario read_scenario_file(const std::filesystem::path& path, const ReadOptions& options = {});
// `file` names the source in messages and anchors a relative "calibration" path.
config::Scenario parse_scenario_text(std::string_view text, const std::string& file, const ReadOptions& options = {});
// The same from a parsed document (a shared cluster's job with the cluster's section
// put in: scenario/cluster_workload_reader.h).
config::Scenario parse_scenario_document(const nlohmann::json& doc, const std::string& file,
                                         const ReadOptions& options = {});

// Strategy sweeps (sweep/, docs/sweep.md) read a scenario document once without
// its "parallelism" (left at its defaults), then check each layout of their space
// with check_parallelism() (layout_checks.h): the same checks and errors as a
// scenario file's "parallelism" section, against the base's cluster, model and
// training, on the typed layout.
config::Scenario parse_scenario_base(const nlohmann::json& doc, const std::string& file, const ReadOptions& options = {});

}  // namespace trainsim::scenario
