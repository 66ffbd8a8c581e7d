#include "core/progress.h"

#include <algorithm>

namespace trainsim::core {

Progress::Progress(const ProgressCallback* callback, double begin, double end, std::uint64_t units)
    : callback_(callback != nullptr && *callback ? callback : nullptr),
      begin_(begin),
      end_(end),
      units_(units),
      // ceil(units / kReports): at most kReports reports before the last unit's.
      step_(units > kReports ? (units + kReports - 1) / kReports : 1),
      next_(callback_ != nullptr ? step_ : kNever) {}

void Progress::report() {
  const bool last = done_ >= units_;
  (*callback_)(last ? end_ : begin_ + (end_ - begin_) * static_cast<double>(done_) / static_cast<double>(units_));
  next_ = last ? kNever : std::min(done_ + step_, units_);  // the last unit always reports
}

}  // namespace trainsim::core
