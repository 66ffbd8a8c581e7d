#pragma once
// gzip-compressed files (RFC 1952), recognised by their magic bytes, not their name:
// the timeline file may be gzipped (DESIGN.md: RESULT.timeline.json.gz), and PyTorch's
// profiler writes gzipped traces (torch.profiler.tensorboard_trace_handler(use_gzip=True):
// NAME.pt.trace.json.gz). Read by the scenario readers and the GUI.
#include <cstddef>
#include <filesystem>
#include <limits>
#include <string>
#include <string_view>

namespace trainsim::scenario {

// True when the bytes start with the gzip magic (1f 8b).
bool has_gzip_magic(std::string_view head);

// True when the file's first two bytes are the gzip magic (false when it cannot be read).
bool is_gzip_file(const std::filesystem::path& path);

// Inflates the file in chunks through zlib (several concatenated members are one
// text, as gunzip reads them). Throws ScenarioError naming the file: "not gzip data",
// "corrupt gzip data (zlib: ...)", "truncated gzip data", and, past `max_bytes` of
// inflated text, "expected at most N MiB inflated".
std::string read_gzip_file(const std::filesystem::path& path,
                           std::size_t max_bytes = std::numeric_limits<std::size_t>::max());

// The first `bytes` of the inflated text (all of it when shorter), for sniffing what a
// file holds without inflating the rest; throws as read_gzip_file for data before them.
std::string read_gzip_head(const std::filesystem::path& path, std::size_t bytes);

}  // namespace trainsim::scenario
