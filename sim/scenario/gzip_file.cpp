#include "scenario/gzip_file.h"

#include <cstdint>
#include <fstream>
#include <vector>
#include <zlib.h>

#include <fmt/format.h>

#include "scenario/errors.h"

namespace trainsim::scenario {

namespace {

constexpr std::size_t kChunkBytes = 1 << 20;
constexpr int kGzipOnlyWindowBits = 15 + 16;  // 32 KiB window, gzip wrapper only (zlib.h, inflateInit2)

struct Inflater {
  z_stream z{};
  Inflater() = default;
  Inflater(const Inflater&) = delete;
  Inflater& operator=(const Inflater&) = delete;
  ~Inflater() { inflateEnd(&z); }
};

// The trailer's ISIZE: the uncompressed size modulo 2^32 of the last member, a
// hint for the output's first allocation.
std::size_t size_hint(std::ifstream& in, std::uintmax_t file_bytes) {
  if (file_bytes < 18) return 0;
  unsigned char b[4] = {};
  in.seekg(static_cast<std::streamoff>(file_bytes - 4));
  in.read(reinterpret_cast<char*>(b), 4);
  in.clear();
  in.seekg(0);
  return static_cast<std::size_t>(b[0]) | static_cast<std::size_t>(b[1]) << 8 |
         static_cast<std::size_t>(b[2]) << 16 | static_cast<std::size_t>(b[3]) << 24;
}

enum class AtLimit { kFail, kStop };

// Inflates `path` up to `limit` bytes of text: past it, fails (kFail) or returns the
// first `limit` bytes (kStop).
std::string inflate_file(const std::filesystem::path& path, std::size_t limit, AtLimit at_limit) {
  const std::string where = path.string();
  const auto fail = [&](const std::string& message) { return ScenarioError(where, "", message); };
  std::ifstream in(path, std::ios::binary);
  if (!in) throw fail("cannot open the file");
  std::error_code ec;
  const std::uintmax_t file_bytes = std::filesystem::file_size(path, ec);
  std::string text;
  if (!ec) text.reserve(std::min(limit, size_hint(in, file_bytes)));

  Inflater inf;
  // inflateInit2_ is what zlib.h's inflateInit2 macro calls (the macro's C cast trips -Wold-style-cast).
  if (inflateInit2_(&inf.z, kGzipOnlyWindowBits, ZLIB_VERSION, static_cast<int>(sizeof(z_stream))) != Z_OK)
    throw fail("zlib cannot start inflating");
  std::vector<char> chunk(kChunkBytes);
  std::vector<char> out(kChunkBytes);
  bool member_open = false;  // inside a member: its end not reached yet
  bool any_input = false;
  for (;;) {
    in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    const auto got = static_cast<uInt>(in.gcount());
    if (got == 0) {
      if (in.bad()) throw fail("cannot read the file");
      break;
    }
    if (!any_input && !has_gzip_magic(std::string_view(chunk.data(), got))) throw fail("not gzip data (no 1f 8b magic)");
    any_input = true;
    inf.z.next_in = reinterpret_cast<Bytef*>(chunk.data());
    inf.z.avail_in = got;
    while (inf.z.avail_in > 0) {
      inf.z.next_out = reinterpret_cast<Bytef*>(out.data());
      inf.z.avail_out = static_cast<uInt>(out.size());
      const int rc = inflate(&inf.z, Z_NO_FLUSH);
      text.append(out.data(), out.size() - inf.z.avail_out);
      if (rc == Z_DATA_ERROR || rc == Z_NEED_DICT)
        throw fail(std::string("corrupt gzip data (zlib: ") + (inf.z.msg ? inf.z.msg : "data error") + ")");
      if (rc == Z_MEM_ERROR) throw fail("out of memory while inflating");
      if (rc != Z_OK && rc != Z_BUF_ERROR && rc != Z_STREAM_END) throw fail("zlib error " + std::to_string(rc));
      if (text.size() > limit) {
        if (at_limit == AtLimit::kStop) {
          text.resize(limit);
          return text;
        }
        throw fail(fmt::format("expected at most {} MiB inflated, found more", limit >> 20));
      }
      member_open = rc != Z_STREAM_END;
      // Another member may follow (concatenated .gz files).
      if (rc == Z_STREAM_END && inflateReset(&inf.z) != Z_OK) throw fail("zlib cannot continue");
    }
  }
  if (!any_input) throw fail("empty file, expected gzip data");
  if (member_open) throw fail("truncated gzip data (the file ends inside a compressed stream)");
  return text;
}

}  // namespace

bool has_gzip_magic(std::string_view head) {
  return head.size() >= 2 && static_cast<unsigned char>(head[0]) == 0x1f && static_cast<unsigned char>(head[1]) == 0x8b;
}

bool is_gzip_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  char head[2] = {};
  return in.read(head, 2) && has_gzip_magic(std::string_view(head, 2));
}

std::string read_gzip_file(const std::filesystem::path& path, std::size_t max_bytes) {
  return inflate_file(path, max_bytes, AtLimit::kFail);
}

std::string read_gzip_head(const std::filesystem::path& path, std::size_t bytes) {
  return inflate_file(path, bytes, AtLimit::kStop);
}

}  // namespace trainsim::scenario
