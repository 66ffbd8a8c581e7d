#pragma once
// Progress of a long computation as a fraction of the whole, for front ends (the
// GUI's progress bar). A Progress meter maps the units of work of one phase onto
// [begin, end] of the whole and calls the callback each time another 1/kReports of
// the phase's units is done, so counting a unit costs an increment and a
// comparison, and the callback runs at most kReports + 1 times per phase.
// Fractions passed to the callback never decrease.
#include <cstdint>
#include <functional>
#include <limits>

namespace trainsim::core {

using ProgressCallback = std::function<void(double fraction)>;

class Progress {
 public:
  static constexpr std::uint64_t kReports = 200;

  Progress() = default;  // counts nothing, reports nothing
  // `callback` may be empty (then nothing is reported); it must outlive the meter.
  Progress(const ProgressCallback* callback, double begin, double end, std::uint64_t units);

  void advance() {
    if (++done_ >= next_) report();
  }

 private:
  static constexpr std::uint64_t kNever = std::numeric_limits<std::uint64_t>::max();

  void report();

  const ProgressCallback* callback_ = nullptr;
  double begin_ = 0.0;
  double end_ = 1.0;
  std::uint64_t units_ = 0;
  std::uint64_t step_ = 1;
  std::uint64_t done_ = 0;
  std::uint64_t next_ = kNever;
};

}  // namespace trainsim::core
