#pragma once
// gzip-compressed files (RFC 1952): DESIGN.md allows the timeline file to be
// gzipped (RESULT.timeline.json.gz). Recognised by their magic bytes, not their
// name, so any file the GUI opens may be compressed.
#include <filesystem>
#include <string>
#include <string_view>

namespace trainsim::gui {

// True when the bytes start with the gzip magic (1f 8b).
bool has_gzip_magic(std::string_view head);

// Inflates the file in chunks through zlib (several concatenated members are one
// text, as gunzip reads them). Throws ReadError naming the file: "not gzip data",
// "corrupt gzip data (zlib: ...)", "truncated gzip data".
std::string read_gzip_file(const std::filesystem::path& path);

}  // namespace trainsim::gui
