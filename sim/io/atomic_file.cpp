#include "io/atomic_file.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <string>
#include <unistd.h>

namespace trainsim::io {

void write_atomically(const std::filesystem::path& path, const std::function<void(std::ostream&)>& write) {
  namespace fs = std::filesystem;
  const fs::path tmp = path.string() + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw OutputError("cannot write " + path.string() + ": " + std::strerror(errno));
    write(out);
    out.flush();
    if (!out) {
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

}  // namespace trainsim::io
