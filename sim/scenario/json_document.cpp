#include "scenario/json_document.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <vector>

#include <fmt/format.h>

#include "scenario/errors.h"
#include "scenario/gzip_file.h"
#include "scenario/json_fields.h"

namespace trainsim::scenario {

namespace {

constexpr int kMaxDepth = 64;

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

bool is_json_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// The parser's message for {"a": 1,} is "unexpected '}'; expected string
// literal", which does not say that the comma is the mistake; the two usual
// slips from other formats get a hint.
std::string parse_hint(std::string_view text, std::size_t byte) {
  // `byte` is the 1-based position of the last character the parser read.
  if (byte == 0 || byte > text.size()) return "";
  const char closing = text[byte - 1];
  if (closing == '\'') return " (JSON strings and keys take double quotes)";
  if (closing != '}' && closing != ']') return "";
  std::size_t i = byte - 1;
  while (i > 0 && is_json_space(text[i - 1])) --i;
  if (i == 0 || text[i - 1] != ',') return "";
  return fmt::format(" (a trailing comma before '{}' is not allowed in JSON)", closing);
}

// nlohmann::json keeps the last of two equal keys in an object without a word;
// in a scenario that is an editing mistake (two "global_batch_size" with
// different values), so it is rejected. Runs as the parser's callback.
class DuplicateKeyCheck {
 public:
  explicit DuplicateKeyCheck(const std::string& file) : file_(file) {}

  bool operator()(int /*depth*/, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
    using Event = nlohmann::json::parse_event_t;
    switch (event) {
      case Event::object_start: frames_.push_back(Frame{true, {}, {}, 0}); break;
      case Event::array_start: frames_.push_back(Frame{false, {}, {}, 0}); break;
      case Event::key: {
        if (frames_.empty()) break;
        std::string key = parsed.get<std::string>();
        if (!frames_.back().keys.insert(key).second)
          throw ScenarioError(file_, path_to(key), "each key once in an object", "\"" + key + "\" twice");
        frames_.back().key = std::move(key);
        break;
      }
      case Event::object_end:
      case Event::array_end:
        if (!frames_.empty()) frames_.pop_back();
        element_done();
        break;
      case Event::value: element_done(); break;
    }
    return true;
  }

 private:
  struct Frame {
    bool object;
    std::set<std::string> keys;
    std::string key;        // the member being parsed (objects)
    std::size_t index = 0;  // the element being parsed (arrays)
  };

  void element_done() {
    if (!frames_.empty() && !frames_.back().object) ++frames_.back().index;
  }

  // The pointer to `key` in the innermost open object.
  [[nodiscard]] std::string path_to(const std::string& key) const {
    std::string path;
    for (std::size_t i = 0; i + 1 < frames_.size(); ++i)
      path += "/" + (frames_[i].object ? json_pointer_escape(frames_[i].key) : std::to_string(frames_[i].index));
    return path + "/" + json_pointer_escape(key);
  }

  const std::string& file_;
  std::vector<Frame> frames_;
};

}  // namespace

std::string read_document_file(const std::filesystem::path& path, std::string_view what, std::size_t max_bytes) {
  const std::string file = path.string();
  std::error_code ec;
  if (!std::filesystem::exists(path, ec) && !ec)
    throw ScenarioError(file, "", fmt::format("an existing {} file", what), "no such file");
  if (std::filesystem::is_directory(path, ec)) throw ScenarioError(file, "", fmt::format("a {} file", what), "a directory");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ScenarioError(file, "", fmt::format("a readable {} file", what), std::strerror(errno));
  char head[2] = {};
  const bool gzip = in.read(head, 2) && has_gzip_magic(std::string_view(head, 2));
  if (gzip) return read_gzip_file(path, max_bytes);  // NAME.json.gz, inflated
  in.clear();
  in.seekg(0);
  std::ostringstream buffer;
  buffer << in.rdbuf();
  std::string text = buffer.str();
  if (text.size() > max_bytes)
    throw ScenarioError(file, "", fmt::format("a {} file of at most {} MiB", what, max_bytes >> 20),
                        fmt::format("{} bytes", text.size()));
  return text;
}

nlohmann::json parse_document(std::string_view text, const std::string& file, std::string_view what) {
  if (text.find_first_not_of(" \t\n\r") == std::string_view::npos)
    throw ScenarioError(file, "", fmt::format("a JSON object (the {})", what), "an empty document");
  check_nesting(text, file);
  try {
    DuplicateKeyCheck duplicates(file);
    return nlohmann::json::parse(text, [&duplicates](int depth, nlohmann::json::parse_event_t event,
                                                     nlohmann::json& parsed) {
      return duplicates(depth, event, parsed);
    });
  } catch (const nlohmann::json::parse_error& e) {
    throw ScenarioError(file, "", "valid JSON", strip_exception_prefix(e.what()) + parse_hint(text, e.byte));
  } catch (const nlohmann::json::out_of_range& e) {
    // A number beyond a double's range (1e400): "number overflow parsing '1e400'"
    // (found by fuzz/fuzz_measured_run).
    throw ScenarioError(file, "", "valid JSON with numbers a double can hold", strip_exception_prefix(e.what()));
  }
}

}  // namespace trainsim::scenario
