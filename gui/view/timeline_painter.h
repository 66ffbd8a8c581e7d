#pragma once
// Paints a timeline with QPainter: the time ruler, the lane labels, the lanes
// (level of detail from model/level_of_detail.h), the counter rows, the
// critical path and the selection. The widget and the headless renderer both
// paint through here, so the pixels the tests check are the ones users see.
#include <QColor>
#include <QRect>
#include <optional>
#include <set>
#include <vector>

#include "model/lane_layout.h"
#include "model/span_filter.h"
#include "model/time_mapping.h"
#include "model/timeline_data.h"

class QPainter;

namespace trainsim::gui {

struct ViewState {
  std::optional<SpanRef> selected;
  SpanFilter filter;
  std::vector<SpanRef> critical_path;  // highlighted with a red outline
  std::set<int> collapsed_nodes;
};

struct PaintGeometry {
  int label_width = 170;   // px, lane labels on the left
  int ruler_height = 24;   // px, the time ruler on top
  double min_block_px = 3.0;  // spans narrower than this fold (level of detail)
  double scroll_y = 0.0;   // px the rows are scrolled up
  bool span_labels = true;
};

QColor to_qcolor(Rgb c);

// Paints into `area`; the mapping's x0 must be area.left() + label_width.
void paint_timeline(QPainter& p, const QRect& area, const TimelineData& t, const LaneLayout& layout,
                    const TimeMapping& m, const ViewState& v, const PaintGeometry& g);

// Height of a timeline shown whole, without scrolling: the ruler and every row
// (the run-timeline strip above the iteration timeline).
int run_strip_height(const TimelineData& t, const PaintGeometry& g = {});

// The category legend in one or more rows of boxes and names; returns the height used.
int paint_legend(QPainter& p, const QRect& area);

// Top of the row area in widget coordinates.
inline double rows_top(const QRect& area, const PaintGeometry& g) { return area.top() + g.ruler_height - g.scroll_y; }

}  // namespace trainsim::gui
