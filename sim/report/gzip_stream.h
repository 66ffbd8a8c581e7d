#pragma once
// A std::ostream adaptor that gzip-compresses (RFC 1952, through zlib) what is
// written to it into another stream. The header carries no file name and a zero
// modification time, so the same text compresses to the same bytes (determinism).
#include <filesystem>
#include <functional>
#include <ostream>
#include <streambuf>
#include <vector>

struct z_stream_s;

namespace trainsim::report {

class GzipStreambuf : public std::streambuf {
 public:
  explicit GzipStreambuf(std::ostream& sink);
  ~GzipStreambuf() override;
  GzipStreambuf(const GzipStreambuf&) = delete;
  GzipStreambuf& operator=(const GzipStreambuf&) = delete;

  // Compresses what is buffered and writes the gzip trailer; false when the sink
  // failed. Further writes fail.
  bool finish();

 protected:
  int_type overflow(int_type ch) override;
  int sync() override;

 private:
  bool deflate_buffer(int flush);

  std::ostream& sink_;
  z_stream_s* z_;
  std::vector<char> in_;
  std::vector<char> out_;
  bool finished_ = false;
};

// True when the path's last extension is ".gz".
bool is_gzip_path(const std::filesystem::path& path);

// write_atomically (io/atomic_file.h), gzip-compressed when the path ends in
// ".gz". Kept apart from write_atomically so that the calibration harness, which
// compiles atomic_file.cpp alone on GPU machines, needs no zlib.
void write_atomically_gz(const std::filesystem::path& path, const std::function<void(std::ostream&)>& write);

}  // namespace trainsim::report
