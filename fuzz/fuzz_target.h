#pragma once
// What every libFuzzer target of fuzz/ checks (docs/architecture.md, "Fuzzing"):
// a reader given any bytes either accepts them or throws its documented error,
// and that error names the file it was given. Anything else (another exception,
// a crash, a sanitizer report, a hang) is a finding: the target aborts and
// libFuzzer keeps the input.
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <string_view>

namespace trainsim::fuzz {

// The name the targets give their input, which every error must repeat.
inline constexpr const char* kFile = "fuzz-input.json";

[[noreturn]] inline void finding(const char* what, const std::exception& e) {
  std::fprintf(stderr, "fuzz finding: %s: %s\n", what, e.what());
  std::abort();
}

// Runs `parse`; returns normally when it accepts the input or throws `Documented`
// with a message naming `file`.
template <class Documented, class Parse>
void expect_clean(Parse&& parse, std::string_view file = kFile) {
  try {
    parse();
  } catch (const Documented& e) {
    if (std::string_view(e.what()).find(file) == std::string_view::npos)
      finding("the error does not name the file", e);
  } catch (const std::exception& e) {
    finding("an undocumented exception", e);
  }
}

}  // namespace trainsim::fuzz
