#include "cli/sweep_journal.h"

#include <fmt/format.h>
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
  } else {
    replaced_ = !earlier.lines.empty() || earlier.torn;
  }
  log_ = std::make_unique<io::AppendLog>(path_, !resume);
}

std::vector<std::size_t> SweepJournal::restore_evaluated(std::vector<sweep::PointResult>& results) const {
  std::vector<std::size_t> left;
  for (std::size_t i = 0; i < evaluated_.size(); ++i) {
    if (evaluated_[i]) {
      results[i] = *evaluated_[i];
    } else {
      left.push_back(i);
    }
  }
  return left;
}

std::vector<std::size_t> SweepJournal::restore_replayed(const std::vector<std::size_t>& selection,
                                                        std::vector<sweep::PointResult>& results) const {
  std::vector<std::size_t> left;
  for (const std::size_t i : selection) {
    if (replayed_[i]) {
      results[i] = *replayed_[i];
    } else {
      left.push_back(i);
    }
  }
  return left;
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
