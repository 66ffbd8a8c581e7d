#include "model/gzip_file.h"

#include <cstdint>
#include <fstream>
#include <memory>
#include <vector>
#include <zlib.h>

#include "model/timeline_reader.h"

namespace trainsim::gui {

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

}  // namespace

bool has_gzip_magic(std::string_view head) {
  return head.size() >= 2 && static_cast<unsigned char>(head[0]) == 0x1f && static_cast<unsigned char>(head[1]) == 0x8b;
}

std::string read_gzip_file(const std::filesystem::path& path) {
  const std::string where = path.string();
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ReadError(where + ": cannot open the file");
  std::error_code ec;
  const std::uintmax_t file_bytes = std::filesystem::file_size(path, ec);
  std::string text;
  if (!ec) text.reserve(size_hint(in, file_bytes));

  Inflater inf;
  // inflateInit2_ is what zlib.h's inflateInit2 macro calls (the macro's C cast trips -Wold-style-cast).
  if (inflateInit2_(&inf.z, kGzipOnlyWindowBits, ZLIB_VERSION, static_cast<int>(sizeof(z_stream))) != Z_OK)
    throw ReadError(where + ": zlib cannot start inflating");
  std::vector<char> chunk(kChunkBytes);
  std::vector<char> out(kChunkBytes);
  bool member_open = false;  // inside a member: its end not reached yet
  bool any_input = false;
  for (;;) {
    in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    const auto got = static_cast<uInt>(in.gcount());
    if (got == 0) {
      if (in.bad()) throw ReadError(where + ": cannot read the file");
      break;
    }
    if (!any_input && !has_gzip_magic(std::string_view(chunk.data(), got)))
      throw ReadError(where + ": not gzip data (no 1f 8b magic)");
    any_input = true;
    inf.z.next_in = reinterpret_cast<Bytef*>(chunk.data());
    inf.z.avail_in = got;
    while (inf.z.avail_in > 0) {
      inf.z.next_out = reinterpret_cast<Bytef*>(out.data());
      inf.z.avail_out = static_cast<uInt>(out.size());
      const int rc = inflate(&inf.z, Z_NO_FLUSH);
      text.append(out.data(), out.size() - inf.z.avail_out);
      if (rc == Z_STREAM_END) {
        member_open = false;
        // Another member may follow (concatenated .gz files).
        if (inflateReset(&inf.z) != Z_OK) throw ReadError(where + ": zlib cannot continue");
        continue;
      }
      if (rc == Z_DATA_ERROR || rc == Z_NEED_DICT)
        throw ReadError(where + ": corrupt gzip data (zlib: " + (inf.z.msg ? inf.z.msg : "data error") + ")");
      if (rc == Z_MEM_ERROR) throw ReadError(where + ": out of memory while inflating");
      if (rc != Z_OK && rc != Z_BUF_ERROR) throw ReadError(where + ": zlib error " + std::to_string(rc));
      member_open = true;
    }
  }
  if (!any_input) throw ReadError(where + ": empty file, expected gzip data");
  if (member_open) throw ReadError(where + ": truncated gzip data (the file ends inside a compressed stream)");
  return text;
}

}  // namespace trainsim::gui
