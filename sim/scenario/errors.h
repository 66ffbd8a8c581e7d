#pragma once
// Errors raised while reading scenario files. Every message names the file, the
// JSON path (RFC 6901 pointer), what was expected and what was found.
#include <stdexcept>
#include <string>

namespace trainsim::scenario {

class ScenarioError : public std::runtime_error {
 public:
  ScenarioError(std::string file, std::string json_path, std::string expected, std::string found);
  // For errors that are not about one value (e.g. a parallel layout that does
  // not divide the GPU count): the message is given whole.
  ScenarioError(std::string file, std::string json_path, std::string message);
  [[nodiscard]] const std::string& file() const { return file_; }
  [[nodiscard]] const std::string& json_path() const { return path_; }
  // What was expected and what was found; empty for an error given whole.
  [[nodiscard]] const std::string& expected() const { return expected_; }
  [[nodiscard]] const std::string& found() const { return found_; }

 private:
  std::string file_;
  std::string path_;
  std::string expected_;
  std::string found_;
};

// A key the file format knows, whose simulation lands with a later issue.
class NotSupportedYet : public ScenarioError {
 public:
  NotSupportedYet(std::string file, std::string json_path, const std::string& what);
};

}  // namespace trainsim::scenario
