#pragma once
// Runs the real `trainsim` binary (TRAINSIM_BINARY) for the end-to-end tests and
// reads the files it writes.
#include <array>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace trainsim::cli_harness {

struct Result {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};

inline Result run(const std::string& args) {
  const std::string cmd = std::string(TRAINSIM_BINARY) + " " + args + " 2>&1";
  Result r;
  FILE* pipe = popen(cmd.c_str(), "r");
  if (pipe == nullptr) return r;
  std::array<char, 4096> buf{};
  std::size_t n = 0;
  while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0) r.output.append(buf.data(), n);
  const int status = pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Starts the binary with `args`, its stdout and stderr going to the files named;
// returns its pid (for a signal), -1 if it could not start.
inline pid_t spawn(const std::vector<std::string>& args, const std::filesystem::path& out,
                   const std::filesystem::path& err) {
  const pid_t pid = fork();
  if (pid != 0) return pid;
  if (std::freopen(out.c_str(), "w", stdout) == nullptr || std::freopen(err.c_str(), "w", stderr) == nullptr)
    _exit(126);
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(TRAINSIM_BINARY));
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  execv(TRAINSIM_BINARY, argv.data());
  _exit(127);
}

// Waits until `ready()` or `seconds` have passed; returns ready().
template <class Ready>
bool wait_until(Ready&& ready, double seconds) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (!ready() && std::chrono::steady_clock::now() < end)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  return ready();
}

// The exit status of a child, -1 when it did not exit normally (a signal ended it).
inline int exit_status(pid_t pid) {
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace trainsim::cli_harness
