#pragma once
// Runs the real `trainsim` binary (TRAINSIM_BINARY) for the end-to-end tests and
// reads the files it writes.
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/wait.h>

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

}  // namespace trainsim::cli_harness
