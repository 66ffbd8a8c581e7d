#pragma once
// The journal file of `trainsim sweep` and `trainsim plan` (sweep/journal.h has
// its line format; docs/sweep.md, "Resuming"): what an earlier run of the same
// spec finished, and every point this run finishes, appended as it finishes.
#include <cstddef>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "io/append_log.h"
#include "sweep/journal.h"

namespace trainsim::cli {

class SweepJournal {
 public:
  // `points`: the candidates of this run. With `resume`, the records already in
  // `path` are read (a torn last line, left by a writer killed mid-line, is
  // dropped: io::AppendLog) and new ones appended after them; without, the file
  // starts empty.
  // Throws std::runtime_error naming the file and line of a record that does not
  // belong to this run (another spec, objective or version) or is damaged.
  SweepJournal(std::filesystem::path path, std::string key, bool resume, std::size_t points);

  [[nodiscard]] bool replaced_earlier() const { return replaced_; }
  [[nodiscard]] const std::filesystem::path& path() const { return path_; }

  // Puts the evaluations an earlier run recorded into `results` (one slot per
  // candidate); returns the indices of the candidates still to evaluate.
  std::vector<std::size_t> restore_evaluated(std::vector<sweep::PointResult>& results) const;
  // The same for the replays of `selection` (indices into `results`); returns the
  // ones still to replay.
  std::vector<std::size_t> restore_replayed(const std::vector<std::size_t>& selection,
                                            std::vector<sweep::PointResult>& results) const;

  // Appends a finished point; safe to call from several threads.
  void record(sweep::JournalStage stage, std::size_t index, const sweep::PointResult& result);
  // Closes and deletes the file (the run's outputs are written: nothing to resume).
  void remove();

 private:
  std::filesystem::path path_;
  std::string key_;
  // What earlier runs recorded, by candidate index.
  std::vector<std::optional<sweep::PointResult>> evaluated_;
  std::vector<std::optional<sweep::PointResult>> replayed_;
  bool replaced_ = false;
  std::mutex mutex_;
  std::unique_ptr<io::AppendLog> log_;
};

}  // namespace trainsim::cli
