#pragma once
// Which chunk of a work list each worker computes next, in a task farm whose
// workers may die or stall (docs/sweep.md, "MPI"): the bookkeeping of the MPI
// farm, kept apart from MPI so that it is tested alone.
//
// The list's `items` positions are cut into chunks of `chunk` positions, handed out
// in order. When none is left to hand out, a chunk whose last hand-out is older
// than the lateness bound is handed out again to whoever asks (a backup copy, as
// MapReduce runs for its stragglers): a worker that died with a chunk loses only
// that chunk's time, and the first copy to finish counts, the others are dropped.
// Results are deterministic per point, so which copy counts does not change any
// output. The bound is max(min_late_s, late_factor x the longest chunk yet):
// long enough that a live worker's chunk is rarely computed twice.
#include <cstddef>
#include <optional>
#include <vector>

namespace trainsim::sweep {

class ChunkBoard {
 public:
  struct Chunk {
    std::size_t begin = 0;  // positions in the work list
    std::size_t end = 0;
  };
  static constexpr double kLateFactor = 3.0;
  static constexpr double kMinLateS = 2.0;

  ChunkBoard(std::size_t items, std::size_t chunk);

  // The chunk to hand out at time `now_s`: the next fresh one, else a late one,
  // else none (nothing left, or only chunks that are not late yet).
  std::optional<std::size_t> take(double now_s);
  // The chunk no longer counts on this hand-out (its worker is gone, or it was
  // stopped): it may be handed out again at once.
  void abandon(std::size_t id);
  // Records that chunk `id`, handed out at `started_s`, finished at `now_s`.
  // True for its first finish (its results count), false for a later copy's.
  bool finish(std::size_t id, double started_s, double now_s);

  [[nodiscard]] const Chunk& chunk(std::size_t id) const { return chunks_[id]; }
  [[nodiscard]] std::size_t chunks() const { return chunks_.size(); }
  [[nodiscard]] bool all_finished() const { return finished_ == chunks_.size(); }
  // True when every chunk handed out and not finished is late at `now_s`: what a
  // stopped run waits for is then gone or stalled.
  [[nodiscard]] bool only_late_left(double now_s) const;
  [[nodiscard]] double late_after_s() const;
  // Chunks handed out more than once (backup copies).
  [[nodiscard]] std::size_t copies() const { return copies_; }

 private:
  struct State {
    bool finished = false;
    int out = 0;                // hand-outs not yet finished or abandoned
    double handed_out_s = 0.0;  // the last hand-out
  };
  std::vector<Chunk> chunks_;
  std::vector<State> state_;
  std::size_t next_ = 0;  // the first chunk never handed out
  std::size_t finished_ = 0;
  std::size_t copies_ = 0;
  double longest_s_ = 0.0;
};

}  // namespace trainsim::sweep
