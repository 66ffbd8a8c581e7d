#include "view/timeline_painter.h"

#include <QFontMetrics>
#include <QPainter>
#include <algorithm>
#include <cmath>

#include "model/level_of_detail.h"

namespace trainsim::gui {

namespace {

const QColor kBackground(255, 255, 255);
const QColor kLaneEven(248, 248, 248);
const QColor kLaneOdd(240, 240, 244);
const QColor kHeaderBackground(220, 224, 232);
const QColor kRulerBackground(235, 235, 235);
const QColor kText(33, 33, 33);
const QColor kCritical(229, 0, 0);
const QColor kCounterFill(90, 120, 200);

QColor faded(QColor c) { return QColor((c.red() + 3 * 255) / 4, (c.green() + 3 * 255) / 4, (c.blue() + 3 * 255) / 4); }

void paint_ruler(QPainter& p, const QRect& area, const TimeMapping& m, const PaintGeometry& g) {
  const QRect ruler(area.left(), area.top(), area.width(), g.ruler_height);
  p.fillRect(ruler, kRulerBackground);
  p.setPen(kText);
  const double left = area.left() + g.label_width;
  for (const RulerTick& tick : ruler_ticks(m, left, area.right(), 90.0)) {
    const int x = static_cast<int>(std::lround(tick.x));
    p.drawLine(x, ruler.bottom() - 6, x, ruler.bottom());
    p.drawText(x + 3, ruler.top() + 2, 120, g.ruler_height - 8, Qt::AlignLeft | Qt::AlignTop,
               QString::fromStdString(tick.label));
  }
}

QString lane_label(const TimelineData& t, const LaneRow& row, const std::set<int>& collapsed) {
  switch (row.kind) {
    case LaneRow::Kind::kNodeHeader:
      if (row.node < 0)  // the lanes of rank -1 (a run timeline's job lane)
        return QStringLiteral("%1 whole run").arg(collapsed.count(row.node) ? QStringLiteral("+") : QStringLiteral("-"));
      return QStringLiteral("%1 node %2").arg(collapsed.count(row.node) ? QStringLiteral("+") : QStringLiteral("-")).arg(row.node);
    case LaneRow::Kind::kLane: {
      const Lane& l = t.lanes[row.index];
      // Rank -1: the whole job (a full-run replay's run timeline).
      if (l.rank < 0) return QStringLiteral("  %1").arg(QString::fromStdString(l.stream));
      return QStringLiteral("  GPU %1  %2").arg(l.rank).arg(QString::fromStdString(l.stream));
    }
    case LaneRow::Kind::kCounter:
      return QString::fromStdString(t.counters[row.index].name).replace(QStringLiteral("utilization "), QStringLiteral("util "));
  }
  return {};
}

void paint_lane(QPainter& p, const TimelineData& t, const Lane& lane, const QRectF& r, const TimeMapping& m,
                const ViewState& v, const PaintGeometry& g, std::vector<DrawBlock>& blocks) {
  visible_blocks(lane, m, r.left(), r.right(), g.min_block_px, blocks);
  const QFontMetrics fm = p.fontMetrics();
  // Touching blocks of one colour become one rectangle: a dense lane at
  // fit-all zoom is then a handful of fills instead of one per block.
  QRectF pending;
  QColor pending_color;
  bool has_pending = false;
  auto flush = [&] {
    if (has_pending) p.fillRect(pending, pending_color);
    has_pending = false;
  };
  for (const DrawBlock& b : blocks) {
    const Span& s = lane.spans[b.first];
    QColor c = b.count == 1 || b.uniform ? to_qcolor(category_color(b.category)) : to_qcolor(kFoldedColor);
    if (v.filter.active() && (b.count > 1 || !v.filter.matches(t, s))) c = faded(c);
    const QRectF box(b.x0, r.top() + 1, b.x1 - b.x0, r.height() - 2);
    if (has_pending && c == pending_color && box.left() <= pending.right() + 0.5) {
      pending.setRight(std::max(pending.right(), box.right()));
    } else {
      flush();
      pending = box;
      pending_color = c;
      has_pending = true;
    }
    if (g.span_labels && b.count == 1 && box.width() > 60) {
      // Cut by the average character width instead of eliding by layout: a
      // label costs one shaping, not two (the 1000x zoom draws ~1000 of them).
      flush();
      const std::string& name = t.name_of(s);
      const auto fits = static_cast<std::size_t>((box.width() - 6) / fm.averageCharWidth());
      QString text = QString::fromUtf8(name.data(), static_cast<qsizetype>(std::min(name.size(), fits)));
      if (name.size() > fits && !text.isEmpty()) text.back() = QChar(0x2026);
      p.setPen(kText);
      p.drawText(QPointF(box.left() + 2, box.center().y() + fm.ascent() / 2.0 - 1), text);
    }
  }
  flush();
}

void paint_counter(QPainter& p, const CounterSeries& c, const QRectF& r, const TimeMapping& m) {
  if (c.points.empty()) return;
  double max_value = c.unit == "fraction" ? 1.0 : 0.0;
  for (const auto& pt : c.points) max_value = std::max(max_value, pt.second);
  if (max_value <= 0.0) return;
  auto bar = [&](double x0, double x1, double value) {
    const double h = (r.height() - 2) * std::min(value / max_value, 1.0);
    if (h > 0.0) p.fillRect(QRectF(x0, r.bottom() - h, x1 - x0, h), kCounterFill);
  };
  const double t_right = m.t_of(r.right());
  // The point that holds at the left edge.
  auto it = std::upper_bound(c.points.begin(), c.points.end(), m.t_of(r.left()),
                             [](double t, const std::pair<double, double>& pt) { return t < pt.first; });
  if (it != c.points.begin()) --it;
  // Stretches narrower than a pixel share a column that shows their highest value.
  double column = -1.0;
  double column_max = 0.0;
  for (; it != c.points.end() && it->first <= t_right; ++it) {
    const double next_t = std::next(it) != c.points.end() ? std::next(it)->first : it->first;
    const double x0 = std::max(m.x_of(it->first), r.left());
    const double x1 = std::min(m.x_of(next_t), r.right());
    if (x1 - x0 >= 1.0) {
      if (column >= 0.0) bar(column, column + 1.0, column_max);
      column = -1.0;
      bar(x0, x1, it->second);
    } else {
      const double px = std::floor(x0);
      if (px != column) {
        if (column >= 0.0) bar(column, column + 1.0, column_max);
        column = px;
        column_max = 0.0;
      }
      column_max = std::max(column_max, it->second);
    }
  }
  if (column >= 0.0) bar(column, column + 1.0, column_max);
}

}  // namespace

QColor to_qcolor(Rgb c) { return QColor(c.r, c.g, c.b); }

void paint_timeline(QPainter& p, const QRect& area, const TimelineData& t, const LaneLayout& layout,
                    const TimeMapping& m, const ViewState& v, const PaintGeometry& g) {
  p.save();
  p.setClipRect(area);
  p.fillRect(area, kBackground);
  const double top = rows_top(area, g);
  const double time_left = area.left() + g.label_width;
  const double time_right = area.right() + 1;
  std::vector<DrawBlock> blocks;
  blocks.reserve(4096);
  std::vector<double> lane_y(t.lanes.size(), -1.0);
  std::vector<double> lane_h(t.lanes.size(), 0.0);
  const QRectF rows_clip(area.left(), area.top() + g.ruler_height, area.width(), area.height() - g.ruler_height);
  p.setClipRect(rows_clip);
  std::size_t lane_number = 0;
  for (const LaneRow& row : layout.rows) {
    const double y = top + row.y;
    if (y + row.height < rows_clip.top() || y > rows_clip.bottom()) {
      if (row.kind == LaneRow::Kind::kLane) ++lane_number;
      continue;
    }
    const QRectF full(area.left(), y, area.width(), row.height);
    const QRectF time_area(time_left, y, time_right - time_left, row.height);
    switch (row.kind) {
      case LaneRow::Kind::kNodeHeader:
        p.fillRect(full, kHeaderBackground);
        break;
      case LaneRow::Kind::kLane:
        lane_y[row.index] = y;
        lane_h[row.index] = row.height;
        p.fillRect(full, lane_number++ % 2 ? kLaneOdd : kLaneEven);
        paint_lane(p, t, t.lanes[row.index], time_area, m, v, g, blocks);
        break;
      case LaneRow::Kind::kCounter:
        p.fillRect(full, kLaneEven);
        paint_counter(p, t.counters[row.index], time_area, m);
        break;
    }
  }
  // Critical path and selection outlines on top of the spans.
  p.setClipRect(QRectF(time_left, rows_clip.top(), time_right - time_left, rows_clip.height()));
  p.setBrush(Qt::NoBrush);
  auto extent = [&](SpanRef r) -> std::optional<QRectF> {
    const double y = lane_y[r.lane];
    if (y < 0.0) return std::nullopt;
    const Span& s = t.span(r);
    const double x0 = std::max(m.x_of(s.start), time_left - 2);
    const double x1 = std::min(m.x_of(s.end), time_right + 2);
    if (x1 < time_left || x0 > time_right) return std::nullopt;
    return QRectF(x0, y + 0.5, std::max(x1 - x0, 1.0), lane_h[r.lane] - 1.0);
  };
  // The critical path: a red bar along the bottom of each of its spans, and an
  // outline around those wide enough to show one.
  // Consecutive bars on one lane that touch are filled once (a long chain of
  // sub-pixel kernels is one rectangle at fit-all zoom).
  QRectF bar;
  bool has_bar = false;
  for (const SpanRef& r : v.critical_path)
    if (const auto box = extent(r)) {
      const QRectF this_bar(box->left(), box->bottom() - 3.0, box->width(), 3.0);
      if (has_bar && this_bar.top() == bar.top() && this_bar.left() <= bar.right() + 0.5) {
        bar.setRight(std::max(bar.right(), this_bar.right()));
      } else {
        if (has_bar) p.fillRect(bar, kCritical);
        bar = this_bar;
        has_bar = true;
      }
      if (box->width() >= 8.0) {
        p.setPen(QPen(kCritical, 1.0));
        p.drawRect(*box);
      }
    }
  if (has_bar) p.fillRect(bar, kCritical);
  if (v.selected)
    if (const auto box = extent(*v.selected)) {
      p.setPen(QPen(QColor(0, 0, 0), 2.0));
      p.drawRect(*box);
    }
  // Labels and ruler last, over anything that scrolled under them.
  p.setClipRect(QRectF(area.left(), rows_clip.top(), g.label_width, rows_clip.height()));
  p.setPen(kText);
  for (const LaneRow& row : layout.rows) {
    const double y = top + row.y;
    if (y + row.height < rows_clip.top() || y > rows_clip.bottom()) continue;
    p.fillRect(QRectF(area.left(), y, g.label_width, row.height),
               row.kind == LaneRow::Kind::kNodeHeader ? kHeaderBackground : kRulerBackground);
    p.drawText(QRectF(area.left() + 4, y, g.label_width - 8, row.height), Qt::AlignVCenter | Qt::AlignLeft,
               lane_label(t, row, v.collapsed_nodes));
  }
  p.setClipRect(area);
  paint_ruler(p, area, m, g);
  p.restore();
}

int run_strip_height(const TimelineData& t, const PaintGeometry& g) {
  return g.ruler_height + static_cast<int>(std::ceil(layout_lanes(t, {}).total_height)) + 2;
}

int paint_legend(QPainter& p, const QRect& area) {
  p.save();
  const QFontMetrics fm = p.fontMetrics();
  const int box = 10;
  const int line = std::max(fm.height(), box) + 4;
  int x = area.left() + 4;
  int y = area.top() + 2;
  p.setPen(kText);
  for (const Category c : all_categories()) {
    const QString name = QString::fromUtf8(category_name(c).data(), static_cast<qsizetype>(category_name(c).size()));
    const int w = box + 4 + fm.horizontalAdvance(name) + 12;
    if (x + w > area.right() && x > area.left() + 4) {
      x = area.left() + 4;
      y += line;
    }
    p.fillRect(QRect(x, y + (line - box) / 2 - 2, box, box), to_qcolor(category_color(c)));
    p.drawText(QRect(x + box + 4, y, w, line - 4), Qt::AlignVCenter | Qt::AlignLeft, name);
    x += w;
  }
  p.restore();
  return y + line - area.top();
}

}  // namespace trainsim::gui
