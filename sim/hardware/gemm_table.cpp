#include "hardware/gemm_table.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace trainsim::hw {

namespace {

using Shape = std::array<double, 3>;
using Axes = std::array<std::vector<double>, 3>;

std::optional<std::size_t> index_of(const std::vector<double>& axis, double v) {
  const auto it = std::lower_bound(axis.begin(), axis.end(), v);
  if (it == axis.end() || *it != v) return std::nullopt;
  return static_cast<std::size_t>(it - axis.begin());
}

// Drops axis values that are not part of the measured grid: repeatedly removes
// the value measured with the smallest share of the other two axes' combinations
// until every value reaches kMinGridFill. A full M x N x K grid plus a few extra
// shapes keeps exactly the grid (an extra value has one or a few rows out of
// |N| |K|); ties go to the lower axis, then the smaller value (deterministic).
Axes grid_axes(const std::map<Shape, double>& shapes) {
  Axes axes;
  for (const auto& [s, _] : shapes)
    for (std::size_t a = 0; a < 3; ++a) axes[a].push_back(s[a]);
  for (auto& axis : axes) {
    std::sort(axis.begin(), axis.end());
    axis.erase(std::unique(axis.begin(), axis.end()), axis.end());
  }
  while (!axes[0].empty() && !axes[1].empty() && !axes[2].empty()) {
    std::array<std::vector<double>, 3> count;
    for (std::size_t a = 0; a < 3; ++a) count[a].assign(axes[a].size(), 0.0);
    for (const auto& [s, _] : shapes) {
      const auto i = index_of(axes[0], s[0]);
      const auto j = index_of(axes[1], s[1]);
      const auto l = index_of(axes[2], s[2]);
      if (!i || !j || !l) continue;
      count[0][*i] += 1.0;
      count[1][*j] += 1.0;
      count[2][*l] += 1.0;
    }
    double worst = std::numeric_limits<double>::infinity();
    std::size_t worst_axis = 0;
    std::size_t worst_index = 0;
    for (std::size_t a = 0; a < 3; ++a) {
      const double others =
          static_cast<double>(axes[(a + 1) % 3].size()) * static_cast<double>(axes[(a + 2) % 3].size());
      for (std::size_t i = 0; i < axes[a].size(); ++i) {
        const double fill = count[a][i] / others;
        if (fill < worst) {
          worst = fill;
          worst_axis = a;
          worst_index = i;
        }
      }
    }
    if (worst >= GemmTable::kMinGridFill) break;
    auto& axis = axes[worst_axis];
    axis.erase(axis.begin() + static_cast<std::ptrdiff_t>(worst_index));
  }
  return axes;
}

// The two grid values around x and the weight of the upper one (0 on a grid value).
struct Bracket {
  std::size_t lo = 0;
  std::size_t hi = 0;
  double w = 0.0;
};

std::optional<Bracket> bracket(const std::vector<double>& axis, double x) {
  if (axis.empty() || !(x >= axis.front() && x <= axis.back())) return std::nullopt;
  const auto it = std::lower_bound(axis.begin(), axis.end(), x);
  const auto hi = static_cast<std::size_t>(it - axis.begin());
  if (*it == x) return Bracket{hi, hi, 0.0};
  const std::size_t lo = hi - 1;
  return Bracket{lo, hi, (std::log(x) - std::log(axis[lo])) / (std::log(axis[hi]) - std::log(axis[lo]))};
}

}  // namespace

GemmTable::GemmTable(std::span<const GemmRow> rows) {
  for (const GemmRow& r : rows) exact_.try_emplace(Shape{r.m, r.n, r.k}, r.seconds);
  axes_ = grid_axes(exact_);
  if (axes_[0].empty() || axes_[1].empty() || axes_[2].empty()) {
    axes_ = {};
    return;
  }
  rate_.assign(axes_[0].size() * axes_[1].size() * axes_[2].size(), std::numeric_limits<double>::quiet_NaN());
  for (const auto& [s, seconds] : exact_) {
    const auto i = index_of(axes_[0], s[0]);
    const auto j = index_of(axes_[1], s[1]);
    const auto l = index_of(axes_[2], s[2]);
    if (i && j && l) rate_[flat(*i, *j, *l)] = 2.0 * s[0] * s[1] * s[2] / seconds;
  }
}

GemmTable::Lookup GemmTable::seconds(double m, double n, double k) const {
  if (exact_.empty()) return {0.0, Miss::kNoRows};
  if (const auto it = exact_.find(Shape{m, n, k}); it != exact_.end()) return {it->second, Miss::kNone};
  const auto bm = bracket(axes_[0], m);
  const auto bn = bracket(axes_[1], n);
  const auto bk = bracket(axes_[2], k);
  if (!bm || !bn || !bk) return {0.0, Miss::kOutsideGrid};
  // Trilinear in log coordinates: the 8 corners weighted by (1-w) or w per axis.
  // Corners of weight 0 (the query lies on that grid value) are not needed.
  double rate = 0.0;
  for (int c = 0; c < 8; ++c) {
    const bool um = (c & 1) != 0;
    const bool un = (c & 2) != 0;
    const bool uk = (c & 4) != 0;
    const double weight = (um ? bm->w : 1.0 - bm->w) * (un ? bn->w : 1.0 - bn->w) * (uk ? bk->w : 1.0 - bk->w);
    if (weight == 0.0) continue;
    const double r = rate_[flat(um ? bm->hi : bm->lo, un ? bn->hi : bn->lo, uk ? bk->hi : bk->lo)];
    if (std::isnan(r)) return {0.0, Miss::kCornerMissing};
    rate += weight * r;
  }
  return {2.0 * m * n * k / rate, Miss::kNone};
}

}  // namespace trainsim::hw
