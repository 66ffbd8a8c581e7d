#include "view/run_page.h"

#include <QCheckBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QPainter>
#include <QPushButton>
#include <QSplitter>
#include <QToolButton>
#include <QVBoxLayout>

#include "model/span_filter.h"
#include "view/span_details.h"
#include "view/summary_panel.h"
#include "view/timeline_painter.h"
#include "view/timeline_view.h"

namespace trainsim::gui {

LegendWidget::LegendWidget(QWidget* parent) : QWidget(parent) {
  setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Fixed);
}

int LegendWidget::heightForWidth(int width) const {
  QImage scratch(std::max(width, 1), 1, QImage::Format_ARGB32_Premultiplied);
  QPainter p(&scratch);
  p.setFont(font());
  return paint_legend(p, QRect(0, 0, width, 1)) + 2;
}

QSize LegendWidget::sizeHint() const { return {800, heightForWidth(800)}; }

void LegendWidget::paintEvent(QPaintEvent*) {
  QPainter p(this);
  const int h = paint_legend(p, rect());
  if (h + 2 != height()) setFixedHeight(h + 2);
}

RunPage::RunPage(Run run, QWidget* parent) : QWidget(parent), run_(std::move(run)) {
  path_ = critical_path(*run_.timeline);

  auto* bar = new QHBoxLayout;
  search_ = new QLineEdit(this);
  search_->setPlaceholderText(tr("search span names (Enter: next match)"));
  search_->setClearButtonEnabled(true);
  bar->addWidget(search_, 1);
  categories_ = new QToolButton(this);
  categories_->setText(tr("Categories"));
  categories_->setPopupMode(QToolButton::InstantPopup);
  auto* menu = new QMenu(categories_);
  for (const Category c : all_categories()) {
    const auto name = category_name(c);
    QAction* a = menu->addAction(QString::fromUtf8(name.data(), static_cast<qsizetype>(name.size())));
    a->setCheckable(true);
    a->setChecked(true);
    a->setData(static_cast<int>(c));
    connect(a, &QAction::toggled, this, &RunPage::apply_filter);
  }
  categories_->setMenu(menu);
  bar->addWidget(categories_);
  auto* next = new QPushButton(tr("Find next"), this);
  bar->addWidget(next);
  auto* fit = new QPushButton(tr("Fit all (F)"), this);
  bar->addWidget(fit);
  show_path_ = new QCheckBox(tr("critical path"), this);
  show_path_->setChecked(true);
  bar->addWidget(show_path_);

  view_ = new TimelineView(this);
  view_->set_timeline(run_.timeline);
  view_->set_critical_path(path_.spans);
  details_ = new QLabel(tr("Click a span for its details; hover for a tooltip."), this);
  details_->setTextFormat(Qt::RichText);
  details_->setWordWrap(true);
  details_->setTextInteractionFlags(Qt::TextSelectableByMouse);

  auto* left = new QWidget(this);
  auto* left_layout = new QVBoxLayout(left);
  left_layout->setContentsMargins(0, 0, 0, 0);
  left_layout->addLayout(bar);
  if (run_.run_timeline) {
    // The whole run over its days above the iteration: one job lane, zoom and pan
    // of its own; a click shows the span's details like the iteration's spans.
    run_view_ = new TimelineView(this);
    run_view_->set_timeline(run_.run_timeline);
    run_view_->setFixedHeight(run_strip_height(*run_.run_timeline));
    left_layout->addWidget(run_view_);
    connect(run_view_, &TimelineView::span_selected, this, [this](int lane, qlonglong index) {
      if (lane >= 0)
        details_->setText(span_details_html(
            *run_.run_timeline, SpanRef{static_cast<std::size_t>(lane), static_cast<std::size_t>(index)}));
    });
  }
  left_layout->addWidget(view_, 1);
  left_layout->addWidget(new LegendWidget(left));
  left_layout->addWidget(details_);

  summary_ = new SummaryPanel(this);
  summary_->set_run(run_, path_);
  auto* split = new QSplitter(this);
  split->addWidget(left);
  split->addWidget(summary_);
  split->setStretchFactor(0, 3);
  split->setStretchFactor(1, 1);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(2, 2, 2, 2);
  layout->addWidget(split);

  connect(search_, &QLineEdit::textChanged, this, &RunPage::apply_filter);
  connect(search_, &QLineEdit::returnPressed, this, &RunPage::find_next);
  connect(next, &QPushButton::clicked, this, &RunPage::find_next);
  connect(fit, &QPushButton::clicked, view_, &TimelineView::fit_all);
  connect(show_path_, &QCheckBox::toggled, this,
          [this](bool on) { view_->set_critical_path(on ? path_.spans : std::vector<SpanRef>{}); });
  connect(view_, &TimelineView::span_selected, this, &RunPage::show_details);
}

void RunPage::apply_filter() {
  SpanFilter f;
  f.text = search_->text().toStdString();
  for (QAction* a : categories_->menu()->actions())
    f.categories.set(static_cast<std::size_t>(a->data().toInt()), a->isChecked());
  view_->set_filter(f);
}

void RunPage::find_next() {
  SpanFilter f;
  f.text = search_->text().toStdString();
  for (QAction* a : categories_->menu()->actions())
    f.categories.set(static_cast<std::size_t>(a->data().toInt()), a->isChecked());
  const auto hit = trainsim::gui::find_next(*run_.timeline, f, current_);
  if (!hit) {
    details_->setText(tr("no span matches"));
    return;
  }
  view_->select(hit);
}

void RunPage::show_details(int lane, qlonglong index) {
  if (lane < 0) {
    current_.reset();
    details_->setText(tr("nothing selected"));
    return;
  }
  current_ = SpanRef{static_cast<std::size_t>(lane), static_cast<std::size_t>(index)};
  details_->setText(span_details_html(*run_.timeline, *current_));
}

}  // namespace trainsim::gui
