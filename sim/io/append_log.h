#pragma once
// A log that survives its writer being killed: each record is one line, handed
// to the kernel with write(2) as soon as it is appended, so a process killed at
// any moment (SIGKILL included) leaves every record it appended and at most one
// torn last line. fdatasync(2) runs at most once a second and when the log is
// closed, so a machine that loses power loses at most the last second.
// Used for the journals of long runs (docs/sweep.md, "Resuming").
#include <chrono>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "io/atomic_file.h"  // OutputError

namespace trainsim::io {

class AppendLog {
 public:
  // Opens `path` for appending (created if missing; emptied first when
  // `truncate`). A torn last line that is there (a writer killed mid-line) is
  // cut off first, so the next record starts a line of its own; the complete
  // lines before it stay. Throws OutputError naming the file.
  AppendLog(std::filesystem::path path, bool truncate);
  AppendLog(const AppendLog&) = delete;
  AppendLog& operator=(const AppendLog&) = delete;
  ~AppendLog();

  // Appends `record` and a newline in one write; `record` holds no newline.
  // Throws OutputError naming the file.
  void append(std::string_view record);
  [[nodiscard]] const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
  int fd_ = -1;
  std::chrono::steady_clock::time_point last_sync_;
  std::string line_;  // scratch: record + '\n'
};

// The complete lines of a log file (none when it does not exist), without their
// newlines; a last line without its newline (the writer was killed while
// writing it) is left out and counted in `torn`. Throws OutputError when the file
// exists but cannot be read.
struct LogLines {
  std::vector<std::string> lines;
  bool torn = false;
};
LogLines read_log(const std::filesystem::path& path);

}  // namespace trainsim::io
