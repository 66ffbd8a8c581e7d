#pragma once
// A progress bar with an ETA on stderr for the commands that can take a while
// (`run`, `sweep`, `plan`), only when stderr is a terminal: piped or redirected
// output stays free of it (and byte-identical between runs). It appears once
// `delay_s` has passed, so a command that ends sooner prints nothing.
#include <chrono>
#include <string>
#include <string_view>

namespace trainsim::cli {

class ProgressBar {
 public:
  ProgressBar(bool enabled, double delay_s = 0.0);
  // `fraction` of the whole done; `middle` is shown between the bar and the ETA
  // ("12/100 points  12%", "simulating  40%"). The line ends when fraction is 1.
  void update(double fraction, std::string_view middle);
  // Seconds since the bar was made.
  [[nodiscard]] double elapsed_s() const;
  // Ends the line if the bar was shown and is not complete (a phase that stopped early).
  void finish();

 private:
  bool enabled_;
  double delay_s_;
  bool shown_ = false;
  bool complete_ = false;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace trainsim::cli
