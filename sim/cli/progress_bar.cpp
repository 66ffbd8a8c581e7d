#include "cli/progress_bar.h"

#include <cstdio>
#include <iostream>
#include <unistd.h>

#include <fmt/format.h>

namespace trainsim::cli {

ProgressBar::ProgressBar(bool enabled, double delay_s)
    : enabled_(enabled && isatty(fileno(stderr)) != 0), delay_s_(delay_s), start_(std::chrono::steady_clock::now()) {}

double ProgressBar::elapsed_s() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

void ProgressBar::update(double fraction, std::string_view middle) {
  if (!enabled_ || complete_) return;
  const double elapsed = elapsed_s();
  if (!shown_ && elapsed < delay_s_) return;  // nothing to show before the delay (or for a phase done by then)
  shown_ = true;
  constexpr int kWidth = 30;
  const int filled = static_cast<int>(fraction * kWidth);
  const double eta = fraction > 0.0 ? elapsed * (1.0 - fraction) / fraction : 0.0;
  std::cerr << fmt::format("\r[{}{}] {}  ETA {}:{:02d} ", std::string(static_cast<std::size_t>(filled), '#'),
                           std::string(static_cast<std::size_t>(kWidth - filled), '.'), middle,
                           static_cast<int>(eta) / 60, static_cast<int>(eta) % 60)
            << std::flush;
  if (fraction >= 1.0) {
    std::cerr << '\n';
    complete_ = true;
  }
}

void ProgressBar::finish() {
  if (shown_ && !complete_) std::cerr << '\n';
  complete_ = true;
}

}  // namespace trainsim::cli
