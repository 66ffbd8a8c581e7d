#include "view/timeline_view.h"

#include <QKeyEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>
#include <QWheelEvent>
#include <algorithm>
#include <cmath>

#include "view/span_details.h"

namespace trainsim::gui {

namespace {
constexpr double kZoomStep = 1.25;     // per wheel notch or key press
constexpr double kPanFraction = 0.1;   // of the width, per key press
constexpr int kClickSlop = 4;          // px a press may move and still be a click
}  // namespace

TimelineView::TimelineView(QWidget* parent) : QWidget(parent) {
  setMouseTracking(true);
  setFocusPolicy(Qt::StrongFocus);
  setMinimumSize(400, 200);
  mapping_.x0 = geometry_.label_width;
}

void TimelineView::set_timeline(std::shared_ptr<const TimelineData> timeline) {
  timeline_ = std::move(timeline);
  state_ = ViewState{};
  geometry_.scroll_y = 0.0;
  relayout();
  fit_all();
}

void TimelineView::relayout() {
  if (timeline_) layout_ = layout_lanes(*timeline_, state_.collapsed_nodes);
  update();
}

void TimelineView::set_filter(const SpanFilter& filter) {
  state_.filter = filter;
  update();
}

void TimelineView::set_critical_path(std::vector<SpanRef> path) {
  state_.critical_path = std::move(path);
  update();
}

void TimelineView::set_fit_range(double t_begin, double t_end) {
  fit_range_ = std::make_pair(t_begin, t_end);
  fit_all();
}

void TimelineView::fit_all() {
  if (!timeline_) return;
  const auto [b, e] = fit_range_.value_or(std::make_pair(timeline_->t_begin, timeline_->t_end));
  set_mapping(TimeMapping::fit(b, e, geometry_.label_width, std::max(width() - geometry_.label_width, 1)));
  auto_fit_ = true;
}

void TimelineView::set_time_window(double t0, double seconds_per_px) {
  if (mapping_.t0 == t0 && mapping_.seconds_per_px == seconds_per_px) return;
  mapping_.t0 = t0;
  mapping_.seconds_per_px = seconds_per_px;
  auto_fit_ = false;
  update();
}

void TimelineView::set_mapping(const TimeMapping& m) {
  auto_fit_ = false;
  mapping_ = m;
  mapping_.x0 = geometry_.label_width;
  update();
  emit time_window_changed(mapping_.t0, mapping_.seconds_per_px);
}

void TimelineView::select(std::optional<SpanRef> span) {
  state_.selected = span;
  if (span && timeline_) {
    // Unfold its node, then bring it into view.
    const int node = timeline_->lanes[span->lane].node;
    if (state_.collapsed_nodes.erase(node)) relayout();
    const Span& s = timeline_->span(*span);
    const double x = mapping_.x_of(s.start);
    if (x < geometry_.label_width || x > width()) {
      TimeMapping m = mapping_;
      m.t0 = s.start - (width() - geometry_.label_width) * 0.25 * m.seconds_per_px;
      set_mapping(m);
    }
    for (const LaneRow& row : layout_.rows)
      if (row.kind == LaneRow::Kind::kLane && row.index == span->lane) {
        const double visible = height() - geometry_.ruler_height;
        if (row.y < geometry_.scroll_y || row.y + row.height > geometry_.scroll_y + visible)
          geometry_.scroll_y = std::max(0.0, row.y - visible / 2);
      }
  }
  update();
  emit span_selected(span ? static_cast<int>(span->lane) : -1, span ? static_cast<qlonglong>(span->index) : -1);
}

std::optional<SpanRef> TimelineView::span_at(QPoint pos) const {
  if (!timeline_ || pos.x() < geometry_.label_width) return std::nullopt;
  const LaneRow* row = layout_.row_at(pos.y() - rows_top(rect(), geometry_));
  if (!row || row->kind != LaneRow::Kind::kLane || pos.y() < geometry_.ruler_height) return std::nullopt;
  const Lane& lane = timeline_->lanes[row->index];
  const double t = mapping_.t_of(pos.x());
  const double slop = 2.0 * mapping_.seconds_per_px;
  // The span under the cursor, else the nearest within two pixels.
  std::optional<SpanRef> best;
  double best_distance = slop;
  for (std::size_t i = first_reaching(lane, t - slop); i < lane.spans.size() && lane.spans[i].start <= t + slop; ++i) {
    const Span& s = lane.spans[i];
    const double distance = t < s.start ? s.start - t : (t > s.end ? t - s.end : 0.0);
    if (distance <= best_distance) {
      best = SpanRef{row->index, i};
      best_distance = distance;
      if (distance == 0.0) break;
    }
  }
  return best;
}

void TimelineView::paintEvent(QPaintEvent*) {
  QPainter p(this);
  if (!timeline_) {
    p.drawText(rect(), Qt::AlignCenter, tr("Open a result (File > Open) or simulate a scenario"));
    return;
  }
  paint_timeline(p, rect(), *timeline_, layout_, mapping_, state_, geometry_);
}

void TimelineView::resizeEvent(QResizeEvent*) {
  // Until the user zooms or pans, the whole timeline follows the width.
  if (auto_fit_) fit_all();
}

void TimelineView::scroll_by(double dy) {
  const double max_scroll = std::max(0.0, layout_.total_height - (height() - geometry_.ruler_height));
  geometry_.scroll_y = std::clamp(geometry_.scroll_y + dy, 0.0, max_scroll);
  update();
}

void TimelineView::wheelEvent(QWheelEvent* event) {
  const double notches = event->angleDelta().y() / 120.0;
  if (event->modifiers() & Qt::ShiftModifier) {
    scroll_by(-notches * 3 * 16);
  } else {
    set_mapping(mapping_.zoomed(std::pow(kZoomStep, notches), std::max<double>(event->position().x(), geometry_.label_width)));
  }
  event->accept();
}

void TimelineView::mousePressEvent(QMouseEvent* event) {
  if (event->button() != Qt::LeftButton) return;
  pressed_ = true;
  dragged_ = false;
  press_pos_ = last_pos_ = event->position().toPoint();
}

void TimelineView::mouseMoveEvent(QMouseEvent* event) {
  const QPoint pos = event->position().toPoint();
  if (pressed_) {
    if ((pos - press_pos_).manhattanLength() > kClickSlop) dragged_ = true;
    if (dragged_) {
      const QPoint d = pos - last_pos_;
      if (d.x() != 0) set_mapping(mapping_.panned(d.x()));
      if (d.y() != 0) scroll_by(-d.y());
      last_pos_ = pos;
    }
    return;
  }
  if (const auto span = span_at(pos))
    QToolTip::showText(event->globalPosition().toPoint(), span_details_html(*timeline_, *span), this);
  else
    QToolTip::hideText();
}

void TimelineView::mouseReleaseEvent(QMouseEvent* event) {
  if (event->button() != Qt::LeftButton || !pressed_) return;
  pressed_ = false;
  if (dragged_ || !timeline_) return;
  const QPoint pos = event->position().toPoint();
  const LaneRow* row = layout_.row_at(pos.y() - rows_top(rect(), geometry_));
  if (row && row->kind == LaneRow::Kind::kNodeHeader && pos.y() >= geometry_.ruler_height) {
    if (!state_.collapsed_nodes.erase(row->node)) state_.collapsed_nodes.insert(row->node);
    relayout();
    return;
  }
  select(span_at(pos));
}

void TimelineView::keyPressEvent(QKeyEvent* event) {
  const double centre = geometry_.label_width + (width() - geometry_.label_width) / 2.0;
  const double pan = (width() - geometry_.label_width) * kPanFraction;
  switch (event->key()) {
    case Qt::Key_Plus:
    case Qt::Key_Equal:
    case Qt::Key_W:
      set_mapping(mapping_.zoomed(kZoomStep, centre));
      break;
    case Qt::Key_Minus:
    case Qt::Key_S:
      set_mapping(mapping_.zoomed(1.0 / kZoomStep, centre));
      break;
    case Qt::Key_Left:
    case Qt::Key_A:
      set_mapping(mapping_.panned(pan));
      break;
    case Qt::Key_Right:
    case Qt::Key_D:
      set_mapping(mapping_.panned(-pan));
      break;
    case Qt::Key_Up:
      scroll_by(-16);
      break;
    case Qt::Key_Down:
      scroll_by(16);
      break;
    case Qt::Key_F:
    case Qt::Key_Home:
      fit_all();
      break;
    default:
      QWidget::keyPressEvent(event);
  }
}

}  // namespace trainsim::gui
