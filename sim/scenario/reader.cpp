#include "scenario/reader.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "scenario/errors.h"
#include "scenario/parse_sections.h"

namespace trainsim::scenario {

namespace {

constexpr int kMaxDepth = 64;
constexpr std::size_t kMaxFileBytes = 64u << 20;

struct Position {
  std::size_t line = 1;
  std::size_t column = 1;
};

Position position_of(std::string_view text, std::size_t byte) {
  Position p;
  for (std::size_t i = 0; i < byte && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++p.line;
      p.column = 1;
    } else {
      ++p.column;
    }
  }
  return p;
}

// Rejects absurdly nested input before the parser recurses into it.
void check_nesting(std::string_view text, const std::string& file) {
  int depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') in_string = true;
    else if (c == '[' || c == '{') {
      if (++depth > kMaxDepth) {
        const Position p = position_of(text, i);
        throw ScenarioError(file, "", fmt::format("JSON nested at most {} levels deep", kMaxDepth),
                            fmt::format("deeper nesting at line {}, column {}", p.line, p.column));
      }
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
}

std::string strip_exception_prefix(std::string message) {
  // "[json.exception.parse_error.101] parse error at line 1, column 2: ..." -> "parse error ..."
  if (const auto close = message.find("] "); message.starts_with("[json.exception") && close != std::string::npos)
    message.erase(0, close + 2);
  return message;
}

}  // namespace

Scenario parse_scenario_text(std::string_view text, const std::string& file) {
  check_nesting(text, file);
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    throw ScenarioError(file, "", "valid JSON", strip_exception_prefix(e.what()));
  }
  const ObjectReader root(doc, file, "",
                          {"name", "description", "cluster", "model", "training", "parallelism", "failures",
                           "calibration", "simulation"});
  Scenario s;
  s.source_file = file;
  s.name = root.text("name", std::filesystem::path(file).stem().string());
  root.text("description", "");
  s.cluster = parse_cluster(root);
  s.model = parse_model(root);
  s.training = parse_training(root, s.cluster);
  s.parallel = parse_parallelism(root, s.cluster, s.model, s.training);
  s.simulation = parse_simulation(root);
  parse_failures(root);
  if (root.has_non_null("calibration")) {
    root.text("calibration");
    throw NotSupportedYet(file, "/calibration", "calibration profiles (calibration issue #5)");
  }
  return s;
}

Scenario read_scenario_file(const std::filesystem::path& path) {
  const std::string file = path.string();
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw ScenarioError(file, "", "a scenario file", "a directory");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ScenarioError(file, "", "a readable scenario file", std::strerror(errno));
  std::ostringstream buffer;
  buffer << in.rdbuf();
  const std::string text = buffer.str();
  if (text.size() > kMaxFileBytes)
    throw ScenarioError(file, "", fmt::format("a scenario file of at most {} MiB", kMaxFileBytes >> 20),
                        fmt::format("{} bytes", text.size()));
  return parse_scenario_text(text, file);
}

}  // namespace trainsim::scenario
