#pragma once
// Reading one JSON document for scenario/ (scenario files, calibration profiles):
// size and nesting limits, duplicate keys rejected, the parser's message with a
// hint for the usual slips. `what` names the document in messages ("scenario",
// "calibration profile"). Errors are ScenarioErrors naming the file.
#include <filesystem>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace trainsim::scenario {

// The whole file; rejects missing files, directories and files over 64 MiB.
std::string read_document_file(const std::filesystem::path& path, std::string_view what);
// Parses `text`; `file` names the source in messages.
nlohmann::json parse_document(std::string_view text, const std::string& file, std::string_view what);

}  // namespace trainsim::scenario
