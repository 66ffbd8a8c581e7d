#pragma once
// Reading one JSON document for scenario/ (scenario files, calibration profiles):
// size and nesting limits, duplicate keys rejected, the parser's message with a
// hint for the usual slips. `what` names the document in messages ("scenario",
// "calibration profile"). Errors are ScenarioErrors naming the file.
#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace trainsim::scenario {

inline constexpr std::size_t kMaxDocumentBytes = 64u << 20;

// The whole file; rejects missing files, directories and files over `max_bytes`
// (64 MiB: scenarios, profiles; a profiler trace is allowed more).
std::string read_document_file(const std::filesystem::path& path, std::string_view what,
                               std::size_t max_bytes = kMaxDocumentBytes);
// Parses `text`; `file` names the source in messages.
nlohmann::json parse_document(std::string_view text, const std::string& file, std::string_view what);

}  // namespace trainsim::scenario
