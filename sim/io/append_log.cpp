#include "io/append_log.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <sstream>
#include <unistd.h>


namespace trainsim::io {

namespace {

constexpr auto kSyncPeriod = std::chrono::seconds(1);

[[noreturn]] void fail(const std::filesystem::path& path, const char* what) {
  throw OutputError(path.string() + ": " + what + ": " + std::strerror(errno));
}

}  // namespace

AppendLog::AppendLog(std::filesystem::path path, bool truncate)
    : path_(std::move(path)), last_sync_(std::chrono::steady_clock::now()) {
  // Read and write: a torn last line is read back to find where it starts.
  const int flags = O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC | (truncate ? O_TRUNC : 0);
  fd_ = ::open(path_.c_str(), flags, 0644);
  if (fd_ < 0) fail(path_, "cannot open the journal for appending");
  if (truncate) return;
  // Cut a torn last line off: keep the bytes up to the last newline.
  const off_t size = ::lseek(fd_, 0, SEEK_END);
  off_t keep = size;
  char c = '\n';
  while (keep > 0) {
    if (::pread(fd_, &c, 1, keep - 1) != 1) fail(path_, "cannot read the journal's last line");
    if (c == '\n') break;
    --keep;
  }
  if (keep < size && ::ftruncate(fd_, keep) != 0) fail(path_, "cannot cut off the journal's torn last line");
}

AppendLog::~AppendLog() {
  if (fd_ < 0) return;
  ::fdatasync(fd_);
  ::close(fd_);
}

void AppendLog::append(std::string_view record) {
  line_.assign(record);
  line_ += '\n';
  // O_APPEND: each write lands at the end as one piece; a short write (a full
  // disk) is finished or reported.
  std::size_t written = 0;
  while (written < line_.size()) {
    const ssize_t n = ::write(fd_, line_.data() + written, line_.size() - written);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail(path_, "cannot append to the journal");
    }
    written += static_cast<std::size_t>(n);
  }
  const auto now = std::chrono::steady_clock::now();
  if (now - last_sync_ >= kSyncPeriod) {
    if (::fdatasync(fd_) != 0) fail(path_, "cannot sync the journal");
    last_sync_ = now;
  }
}

LogLines read_log(const std::filesystem::path& path) {
  LogLines out;
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return out;
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(path, "cannot read the journal");
  std::ostringstream text;
  text << in.rdbuf();
  const std::string s = text.str();
  std::size_t begin = 0;
  while (begin < s.size()) {
    const std::size_t end = s.find('\n', begin);
    if (end == std::string::npos) {
      out.torn = true;
      break;
    }
    out.lines.emplace_back(s, begin, end - begin);
    begin = end + 1;
  }
  return out;
}

}  // namespace trainsim::io
