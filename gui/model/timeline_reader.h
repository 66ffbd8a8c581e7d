#pragma once
// Reads a trainsim timeline file (docs/results.md, "Timeline file"), written by
// the simulator or by the trainer's measured runs. Streams the JSON through a
// SAX handler instead of building a document, so a million spans load in
// about two seconds. A gzip-compressed file (RESULT.timeline.json.gz) is
// inflated on the way in.
#include <filesystem>
#include <stdexcept>
#include <string_view>

#include "model/timeline_data.h"

namespace trainsim::gui {

class ReadError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Throws ReadError naming the file, the place and what was expected.
TimelineData read_timeline_file(const std::filesystem::path& path);
// `source` names the text in messages.
TimelineData parse_timeline_text(std::string_view text, std::string_view source);

// Reads a whole file into memory, inflating it when it is gzip-compressed
// (scenario/gzip_file.h); throws ReadError when it cannot.
std::string read_text_file(const std::filesystem::path& path);

}  // namespace trainsim::gui
