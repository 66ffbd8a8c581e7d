#pragma once
// One opened run in a tab: search and category filter above the timeline, the
// legend and the selected span's details below, the summary on the right. A
// result with failures also has its whole run (the run timeline, days long) as a
// strip between the search bar and the iteration timeline.
#include <QWidget>
#include <optional>

#include "model/critical_path.h"
#include "model/run.h"

class QCheckBox;
class QLabel;
class QLineEdit;
class QToolButton;

namespace trainsim::gui {

class SummaryPanel;
class TimelineView;

class LegendWidget : public QWidget {
  Q_OBJECT
 public:
  explicit LegendWidget(QWidget* parent = nullptr);
  QSize sizeHint() const override;
  bool hasHeightForWidth() const override { return true; }
  int heightForWidth(int width) const override;

 protected:
  void paintEvent(QPaintEvent* event) override;
};

class RunPage : public QWidget {
  Q_OBJECT
 public:
  explicit RunPage(Run run, QWidget* parent = nullptr);
  const Run& run() const { return run_; }
  TimelineView* timeline() const { return view_; }
  // The whole-run strip above the iteration timeline (a result with failures), or null.
  TimelineView* run_timeline() const { return run_view_; }

 private:
  void apply_filter();
  void find_next();
  void show_details(int lane, qlonglong index);

  Run run_;
  CriticalPath path_;
  std::optional<SpanRef> current_;  // the selected span, where "Find next" starts
  TimelineView* view_ = nullptr;
  TimelineView* run_view_ = nullptr;
  SummaryPanel* summary_ = nullptr;
  QLineEdit* search_ = nullptr;
  QToolButton* categories_ = nullptr;
  QCheckBox* show_path_ = nullptr;
  QLabel* details_ = nullptr;
};

}  // namespace trainsim::gui
