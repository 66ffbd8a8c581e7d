#pragma once
// The measured GEMMs of one dtype, priced by shape (docs/model.md, "Calibrated
// costs"): an exact shape takes its measured time; any other shape inside the
// measured grid takes the achieved FLOP/s interpolated trilinearly in
// (ln m, ln n, ln k) between the bracketing grid points.
#include <array>
#include <map>
#include <optional>
#include <span>
#include <vector>

#include "hardware/calibration_profile.h"

namespace trainsim::hw {

class GemmTable {
 public:
  enum class Miss { kNone, kNoRows, kOutsideGrid, kCornerMissing };
  struct Lookup {
    double seconds = 0.0;  // valid when miss == kNone
    Miss miss = Miss::kNone;
  };

  GemmTable() = default;
  // Rows of one dtype. A shape measured twice keeps its first row (file order).
  explicit GemmTable(std::span<const GemmRow> rows);

  [[nodiscard]] bool empty() const { return exact_.empty(); }
  [[nodiscard]] Lookup seconds(double m, double n, double k) const;
  // The grid's values along m (0), n (1) and k (2), ascending; extra shapes off
  // the grid are not in it (see the constructor).
  [[nodiscard]] const std::vector<double>& axis(std::size_t a) const { return axes_.at(a); }
  // A grid value must be measured with at least this share of the other two axes'
  // combinations; values below it (extra shapes) are dropped from the grid, the
  // sparsest first.
  static constexpr double kMinGridFill = 0.5;

 private:
  [[nodiscard]] std::size_t flat(std::size_t i, std::size_t j, std::size_t l) const {
    return (i * axes_[1].size() + j) * axes_[2].size() + l;
  }

  std::map<std::array<double, 3>, double> exact_;  // shape -> seconds, every row
  std::array<std::vector<double>, 3> axes_;
  std::vector<double> rate_;  // FLOP/s at each grid point; NaN where not measured
};

}  // namespace trainsim::hw
