#pragma once
// The interactive timeline: wheel zooms around the cursor (Shift+wheel
// scrolls), a drag pans, keys zoom (+/-, W/S), pan (A/D, arrows) and fit (F,
// Home); hovering shows a span's details, a click selects it, a click on a
// node's header folds or unfolds its GPUs.
#include <QWidget>
#include <memory>
#include <optional>

#include "model/lane_layout.h"
#include "view/timeline_painter.h"

namespace trainsim::gui {

class TimelineView : public QWidget {
  Q_OBJECT
 public:
  explicit TimelineView(QWidget* parent = nullptr);

  void set_timeline(std::shared_ptr<const TimelineData> timeline);
  void set_filter(const SpanFilter& filter);
  void set_critical_path(std::vector<SpanRef> path);
  void select(std::optional<SpanRef> span);  // and scroll it into view
  void set_time_window(double t0, double seconds_per_px);  // from a partner view (comparison)
  void fit_all();
  // Fits [t_begin, t_end] instead of the timeline's own extent (aligned comparison).
  void set_fit_range(double t_begin, double t_end);

  const TimeMapping& mapping() const { return mapping_; }
  std::optional<SpanRef> span_at(QPoint pos) const;

 signals:
  void span_selected(int lane, qlonglong index);  // lane -1: nothing selected
  void time_window_changed(double t0, double seconds_per_px);

 protected:
  void paintEvent(QPaintEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;
  void wheelEvent(QWheelEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;
  void mouseReleaseEvent(QMouseEvent* event) override;
  void keyPressEvent(QKeyEvent* event) override;

 private:
  void set_mapping(const TimeMapping& m);
  void scroll_by(double dy);
  void relayout();

  std::shared_ptr<const TimelineData> timeline_;
  LaneLayout layout_;
  TimeMapping mapping_;
  ViewState state_;
  PaintGeometry geometry_;
  std::optional<std::pair<double, double>> fit_range_;
  bool auto_fit_ = true;  // fit again on resize until the user zooms or pans
  QPoint press_pos_;
  QPoint last_pos_;
  bool pressed_ = false;
  bool dragged_ = false;
};

}  // namespace trainsim::gui
