#include "report/atomic_file.h"

#include "report/gzip_stream.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <string>
#include <unistd.h>

namespace trainsim::report {

void write_atomically(const std::filesystem::path& path, const std::function<void(std::ostream&)>& write) {
  namespace fs = std::filesystem;
  const fs::path tmp = path.string() + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw OutputError("cannot write " + path.string() + ": " + std::strerror(errno));
    bool ok = true;
    if (is_gzip_path(path)) {
      GzipStreambuf gzip(out);
      std::ostream compressed(&gzip);
      write(compressed);
      ok = compressed.good() && gzip.finish();
    } else {
      write(out);
    }
    out.flush();
    if (!ok || !out) {
      std::error_code ignored;
      fs::remove(tmp, ignored);
      throw OutputError("cannot write " + path.string() + ": write failed (disk full?)");
    }
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) {
    std::error_code ignored;
    fs::remove(tmp, ignored);
    throw OutputError("cannot write " + path.string() + ": " + ec.message());
  }
}

}  // namespace trainsim::report
