#include "cli/sweep_journal.h"

#include <fmt/format.h>
#include <cstdint>
#include <stdexcept>

namespace trainsim::cli {

SweepJournal::SweepJournal(std::filesystem::path path, std::string key, bool resume, std::size_t points)
    : path_(std::move(path)), key_(std::move(key)), evaluated_(points), replayed_(points) {
  const io::LogLines earlier = io::read_log(path_);
  if (resume) {
    for (std::size_t line = 0; line < earlier.lines.size(); ++line) {
      try {
        sweep::JournalRecord r = sweep::parse_journal_line(earlier.lines[line], key_);
        if (r.index >= points)
          throw std::invalid_argument(fmt::format("\"index\" {}: this run has {} points", r.index, points));
        auto& slot = r.stage == sweep::JournalStage::kEvaluate ? evaluated_[r.index] : replayed_[r.index];
        slot = std::move(r.result);
      } catch (const std::exception& e) {
        throw std::runtime_error(fmt::format("{}: line {}: {} (delete the journal, or run without --resume, to start "
                                             "over)",
                                             path_.string(), line + 1, e.what()));
      }
    }
    records_read_ = earlier.lines.size();
    torn_ = earlier.torn;
  } else {
    replaced_ = !earlier.lines.empty() || earlier.torn;
  }
  // A torn last line is cut off before appending, so the next record starts a
  // line of its own; the complete lines before it stay where they are.
  if (resume && torn_) {
    std::uintmax_t complete = 0;
    for (const std::string& l : earlier.lines) complete += l.size() + 1;
    std::error_code ec;
    std::filesystem::resize_file(path_, complete, ec);
    if (ec) throw std::runtime_error(fmt::format("{}: cannot cut off its torn last line: {}", path_.string(), ec.message()));
  }
  log_ = std::make_unique<io::AppendLog>(path_, !resume);
}

void SweepJournal::record(sweep::JournalStage stage, std::size_t index, const sweep::PointResult& result) {
  const std::string line = sweep::journal_line(key_, sweep::JournalRecord{stage, index, result});
  const std::lock_guard lock(mutex_);
  log_->append(line);
}

void SweepJournal::remove() {
  const std::lock_guard lock(mutex_);
  log_.reset();
  std::error_code ec;
  std::filesystem::remove(path_, ec);
}

}  // namespace trainsim::cli
