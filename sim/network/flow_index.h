#pragma once
// FlowSolver's map from a flow's id to its slot: open addressing with linear
// probing, and deletion by backward shift (Knuth, TAOCP vol. 3, 6.4, Algorithm R),
// so there are no tombstones and a lookup stops at the first empty cell. Ids are
// consecutive integers, spread by Fibonacci hashing. A flow's add and removal
// cost no allocation, unlike std::unordered_map's node per entry, which showed
// as a tenth of a flow-model run of the Megatron-LM 1T row (issue 22, item 7).
#include <bit>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace trainsim::net {

class FlowIndex {
 public:
  [[nodiscard]] std::size_t size() const { return size_; }

  // `id` must not be present.
  void insert(std::uint64_t id, std::uint32_t slot) {
    if (2 * (size_ + 1) > cells_.size()) grow();
    std::size_t i = home(id);
    while (cells_[i].used) i = (i + 1) & mask_;
    cells_[i] = Cell{id, slot, true};
    ++size_;
  }

  [[nodiscard]] std::optional<std::uint32_t> find(std::uint64_t id) const {
    if (cells_.empty()) return std::nullopt;
    for (std::size_t i = home(id); cells_[i].used; i = (i + 1) & mask_)
      if (cells_[i].id == id) return cells_[i].slot;
    return std::nullopt;
  }

  // Removes `id` if present.
  void erase(std::uint64_t id) {
    if (cells_.empty()) return;
    std::size_t i = home(id);
    while (cells_[i].used && cells_[i].id != id) i = (i + 1) & mask_;
    if (!cells_[i].used) return;
    // Move back every later entry of the run that may not sit past the hole.
    for (std::size_t j = (i + 1) & mask_; cells_[j].used; j = (j + 1) & mask_) {
      const std::size_t h = home(cells_[j].id);
      // Entry j may fill the hole at i unless its home lies cyclically in (i, j].
      const bool stays = i <= j ? (i < h && h <= j) : (i < h || h <= j);
      if (stays) continue;
      cells_[i] = cells_[j];
      i = j;
    }
    cells_[i].used = false;
    --size_;
  }

 private:
  struct Cell {
    std::uint64_t id = 0;
    std::uint32_t slot = 0;
    bool used = false;
  };

  [[nodiscard]] std::size_t home(std::uint64_t id) const {
    return static_cast<std::size_t>((id * 0x9E3779B97F4A7C15ULL) >> shift_);
  }

  void grow() {
    std::vector<Cell> old;
    old.swap(cells_);
    const std::size_t capacity = old.empty() ? 64 : 2 * old.size();
    cells_.assign(capacity, Cell{});
    mask_ = capacity - 1;
    shift_ = 64 - std::countr_zero(capacity);
    size_ = 0;
    for (const Cell& c : old)
      if (c.used) insert(c.id, c.slot);
  }

  std::vector<Cell> cells_;
  std::size_t mask_ = 0;
  int shift_ = 64;
  std::size_t size_ = 0;
};

}  // namespace trainsim::net
