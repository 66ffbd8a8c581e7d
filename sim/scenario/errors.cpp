#include "scenario/errors.h"

#include <utility>

namespace trainsim::scenario {
namespace {

// "<file>: <json_path>: <message>". The path is left out when it is empty
// (errors about the whole document, such as malformed JSON): an empty pointer
// is valid RFC 6901 but reads as a missing word in a message.
std::string locate(const std::string& file, const std::string& json_path, const std::string& message) {
  std::string out;
  if (!file.empty()) out += file + ": ";
  if (!json_path.empty()) out += json_path + ": ";
  out += message;
  return out;
}

}  // namespace

// The base class is built before the members, so the message is composed from
// the parameters before they are moved into the members.
ScenarioError::ScenarioError(std::string file, std::string json_path, std::string expected, std::string found)
    : std::runtime_error(locate(file, json_path, "expected " + expected + ", found " + found)),
      file_(std::move(file)),
      path_(std::move(json_path)),
      expected_(std::move(expected)),
      found_(std::move(found)) {}

ScenarioError::ScenarioError(std::string file, std::string json_path, std::string message)
    : std::runtime_error(locate(file, json_path, message)), file_(std::move(file)), path_(std::move(json_path)) {}

NotSupportedYet::NotSupportedYet(std::string file, std::string json_path, const std::string& what)
    : ScenarioError(std::move(file), std::move(json_path), "not supported yet: " + what) {}

}  // namespace trainsim::scenario
