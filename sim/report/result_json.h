#pragma once
// The result file (DESIGN.md, "Result file"; every key in docs/results.md).
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "report/metrics.h"

namespace trainsim::report {

// `run_timeline_file`: the full-run timeline beside it (with failures only).
nlohmann::ordered_json result_json(const config::Scenario& s, const Metrics& m, const std::string& timeline_file,
                                   const std::string& run_timeline_file = "");
void write_result(const std::filesystem::path& path, const nlohmann::ordered_json& result);

}  // namespace trainsim::report
