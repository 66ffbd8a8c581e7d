#include "sweep/chunk_board.h"

#include <algorithm>
#include <stdexcept>

namespace trainsim::sweep {

ChunkBoard::ChunkBoard(std::size_t items, std::size_t chunk) {
  if (chunk == 0) throw std::invalid_argument("ChunkBoard: a chunk of 0 items");
  for (std::size_t b = 0; b < items; b += chunk) chunks_.push_back({b, std::min(items, b + chunk)});
  state_.resize(chunks_.size());
}

double ChunkBoard::late_after_s() const { return std::max(kMinLateS, kLateFactor * longest_s_); }

std::optional<std::size_t> ChunkBoard::take(double now_s) {
  std::optional<std::size_t> pick;
  if (next_ < chunks_.size()) {
    pick = next_++;
  } else {
    // The unfinished chunk whose last hand-out is oldest, if nobody holds it or it is late.
    for (std::size_t id = 0; id < chunks_.size(); ++id) {
      const State& s = state_[id];
      if (s.finished || (s.out > 0 && now_s - s.handed_out_s <= late_after_s())) continue;
      if (!pick || s.handed_out_s < state_[*pick].handed_out_s) pick = id;
    }
    if (pick) ++copies_;
  }
  if (pick) {
    ++state_[*pick].out;
    state_[*pick].handed_out_s = now_s;
  }
  return pick;
}

void ChunkBoard::abandon(std::size_t id) { state_[id].out = std::max(0, state_[id].out - 1); }

bool ChunkBoard::finish(std::size_t id, double started_s, double now_s) {
  State& s = state_[id];
  s.out = std::max(0, s.out - 1);
  longest_s_ = std::max(longest_s_, now_s - started_s);
  if (s.finished) return false;
  s.finished = true;
  ++finished_;
  return true;
}

bool ChunkBoard::only_late_left(double now_s) const {
  for (std::size_t id = 0; id < chunks_.size(); ++id) {
    const State& s = state_[id];
    if (!s.finished && s.out > 0 && now_s - s.handed_out_s <= late_after_s()) return false;
  }
  return true;
}

}  // namespace trainsim::sweep
