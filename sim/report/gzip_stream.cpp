#include "report/gzip_stream.h"

#include "io/atomic_file.h"

#include <stdexcept>
#include <zlib.h>

namespace trainsim::report {

namespace {
constexpr std::size_t kBufferBytes = 1 << 18;
constexpr int kGzipWindowBits = 15 + 16;  // 32 KiB window, gzip wrapper (zlib.h, deflateInit2)
constexpr int kMemLevel = 8;              // zlib's default
}  // namespace

GzipStreambuf::GzipStreambuf(std::ostream& sink) : sink_(sink), z_(new z_stream_s{}), in_(kBufferBytes), out_(kBufferBytes) {
  // deflateInit2_ is what zlib.h's deflateInit2 macro calls (the macro's C cast trips -Wold-style-cast).
  if (deflateInit2_(z_, Z_DEFAULT_COMPRESSION, Z_DEFLATED, kGzipWindowBits, kMemLevel, Z_DEFAULT_STRATEGY,
                    ZLIB_VERSION, static_cast<int>(sizeof(z_stream))) != Z_OK) {
    delete z_;
    throw std::runtime_error("zlib: cannot start a gzip stream");
  }
  setp(in_.data(), in_.data() + in_.size());
}

GzipStreambuf::~GzipStreambuf() {
  deflateEnd(z_);
  delete z_;
}

bool GzipStreambuf::deflate_buffer(int flush) {
  z_->next_in = reinterpret_cast<Bytef*>(pbase());
  z_->avail_in = static_cast<uInt>(pptr() - pbase());
  for (;;) {
    z_->next_out = reinterpret_cast<Bytef*>(out_.data());
    z_->avail_out = static_cast<uInt>(out_.size());
    const int rc = deflate(z_, flush);
    if (rc == Z_STREAM_ERROR) return false;
    sink_.write(out_.data(), static_cast<std::streamsize>(out_.size() - z_->avail_out));
    if (!sink_) return false;
    // Z_NO_FLUSH: done once deflate left output space (it took all the input);
    // Z_FINISH: done at the end of the stream.
    if (flush == Z_FINISH ? rc == Z_STREAM_END : z_->avail_out != 0) break;
  }
  setp(in_.data(), in_.data() + in_.size());
  return true;
}

GzipStreambuf::int_type GzipStreambuf::overflow(int_type ch) {
  if (finished_ || !deflate_buffer(Z_NO_FLUSH)) return traits_type::eof();
  if (!traits_type::eq_int_type(ch, traits_type::eof())) {
    *pptr() = traits_type::to_char_type(ch);
    pbump(1);
  }
  return traits_type::not_eof(ch);
}

// Compression continues across syncs (no Z_SYNC_FLUSH, which would cost ratio);
// finish() writes the rest.
int GzipStreambuf::sync() { return finished_ ? -1 : 0; }

bool GzipStreambuf::finish() {
  if (finished_) return false;
  finished_ = true;
  return deflate_buffer(Z_FINISH) && sink_.flush();
}

bool is_gzip_path(const std::filesystem::path& path) { return path.extension() == ".gz"; }

void write_atomically_gz(const std::filesystem::path& path, const std::function<void(std::ostream&)>& write) {
  if (!is_gzip_path(path)) {
    io::write_atomically(path, write);
    return;
  }
  io::write_atomically(path, [&](std::ostream& out) {
    GzipStreambuf gzip(out);
    std::ostream compressed(&gzip);
    write(compressed);
    // A failed compression fails the file: write_atomically removes the
    // temporary file and throws OutputError naming it.
    if (!compressed.good() || !gzip.finish()) out.setstate(std::ios::badbit);
  });
}

}  // namespace trainsim::report
