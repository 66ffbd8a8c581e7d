#include "model/level_of_detail.h"

#include <algorithm>

namespace trainsim::gui {

void visible_blocks(const Lane& lane, const TimeMapping& m, double x_left, double x_right, double min_px,
                    std::vector<DrawBlock>& out) {
  out.clear();
  const auto& spans = lane.spans;
  const std::size_t n = spans.size();
  std::size_t i = first_reaching(lane, m.t_of(x_left));
  const double t_right = m.t_of(x_right);
  while (i < n && spans[i].start <= t_right) {
    const Span& s = spans[i];
    const double x0 = std::max(m.x_of(s.start), x_left);
    const double x1 = std::min(m.x_of(s.end), x_right);
    if (x1 - x0 >= min_px || m.x_of(s.end) >= x_right) {
      out.push_back({x0, std::max(x1, x0 + 1.0), i, 1, s.category, true});
      ++i;
      continue;
    }
    // Fold every span that starts before x0 + min_px.
    std::size_t j = first_starting_at_or_after(lane, i + 1, m.t_of(x0 + min_px));
    if (j == i + 1) {
      out.push_back({x0, std::max(x1, x0 + 1.0), i, 1, s.category, true});
      ++i;
      continue;
    }
    DrawBlock b{x0, 0.0, i, j - i, s.category, true};
    double end = lane.max_end[j - 1];
    if (j - i <= kScannedFold) {
      end = s.end;
      for (std::size_t k = i + 1; k < j; ++k) {
        end = std::max(end, spans[k].end);
        b.uniform = b.uniform && spans[k].category == s.category;
      }
    } else {
      b.uniform = false;
    }
    b.x1 = std::clamp(m.x_of(end), x0 + 1.0, x_right);
    // The next block starts after this one: never paint a pixel twice.
    if (j < n) b.x1 = std::min(b.x1, std::max(x0 + 1.0, m.x_of(spans[j].start)));
    out.push_back(b);
    i = j;
  }
}

}  // namespace trainsim::gui
