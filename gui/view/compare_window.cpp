#include "view/compare_window.h"

#include <QHeaderView>
#include <QLabel>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>
#include <algorithm>

#include "model/lane_model.h"
#include "model/run_comparison.h"
#include "view/timeline_view.h"

namespace trainsim::gui {

CompareWindow::CompareWindow(const Run& a, const Run& b, QWidget* parent) : QWidget(parent) {
  setWindowTitle(tr("Compare %1 (A) with %2 (B)").arg(QString::fromStdString(a.label), QString::fromStdString(b.label)));
  const double t_end = std::max(a.timeline->t_end, b.timeline->t_end);
  auto make_view = [&](const Run& run) {
    auto* v = new TimelineView(this);
    v->set_timeline(run.timeline);
    v->set_fit_range(0.0, t_end);
    return v;
  };
  a_ = make_view(a);
  b_ = make_view(b);
  // Linked axes: either view's zoom or pan moves the other.
  connect(a_, &TimelineView::time_window_changed, b_, &TimelineView::set_time_window);
  connect(b_, &TimelineView::time_window_changed, a_, &TimelineView::set_time_window);

  diff_ = new CategoryDiffModel(this);
  diff_->set_rows(compare_categories(category_totals(*a.timeline), category_totals(*b.timeline)),
                  QStringLiteral("A: %1").arg(QString::fromStdString(a.label)),
                  QStringLiteral("B: %1").arg(QString::fromStdString(b.label)));
  auto* table = new QTableView(this);
  table->setModel(diff_);
  table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  table->verticalHeader()->hide();

  auto* split = new QSplitter(Qt::Vertical, this);
  auto wrap = [this](const QString& title, QWidget* w) {
    auto* box = new QWidget(this);
    auto* l = new QVBoxLayout(box);
    l->setContentsMargins(0, 0, 0, 0);
    l->addWidget(new QLabel(title, box));
    l->addWidget(w, 1);
    return box;
  };
  split->addWidget(wrap(tr("A: %1").arg(QString::fromStdString(a.label)), a_));
  split->addWidget(wrap(tr("B: %1").arg(QString::fromStdString(b.label)), b_));
  split->addWidget(wrap(tr("busy time per category on the lowest rank"), table));
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(split);
  resize(1400, 900);
}

}  // namespace trainsim::gui
