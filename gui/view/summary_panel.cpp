#include "view/summary_panel.h"

#include <QLabel>
#include <QPainter>
#include <QVBoxLayout>
#include <algorithm>

#include "model/run_comparison.h"
#include "model/time_mapping.h"
#include "view/span_details.h"
#include "view/timeline_painter.h"

namespace trainsim::gui {

namespace {

QString qs(const std::string& s) { return QString::fromStdString(s); }
QString qs(std::string_view s) { return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size())); }

// Breakdown entries of the result file (and a measured run's kernel classes),
// coloured like the timeline's categories.
QColor breakdown_color(const std::string& key) {
  if (key == "compute") return to_qcolor(category_color(Category::kForward));
  if (key == "exposed_communication" || key == "all_reduce") return to_qcolor(category_color(Category::kAllReduce));
  if (key == "pipeline_bubble") return to_qcolor(category_color(Category::kIdle)).darker(130);
  if (key == "optimizer") return to_qcolor(category_color(Category::kOptimizer));
  if (key == "other") return to_qcolor(category_color(Category::kOther));
  return to_qcolor(category_color(Category::kForward));  // the model's kernel classes (gemm, attention, ...)
}

}  // namespace

BreakdownBars::BreakdownBars(QWidget* parent) : QWidget(parent) {}

void BreakdownBars::set_bars(std::vector<Bar> bars) {
  bars_ = std::move(bars);
  updateGeometry();
  update();
}

QSize BreakdownBars::sizeHint() const {
  return {280, static_cast<int>(bars_.size()) * (fontMetrics().height() + 4) + 4};
}

void BreakdownBars::paintEvent(QPaintEvent*) {
  QPainter p(this);
  double total = 0.0;
  double longest = 0.0;
  for (const Bar& b : bars_) {
    total += b.seconds;
    longest = std::max(longest, b.seconds);
  }
  const int line = fontMetrics().height() + 4;
  const int name_w = 160;
  const int text_w = 120;
  const int bar_w = std::max(width() - name_w - text_w, 20);
  int y = 2;
  for (const Bar& b : bars_) {
    p.setPen(palette().color(QPalette::WindowText));
    p.drawText(QRect(0, y, name_w - 4, line), Qt::AlignVCenter | Qt::AlignLeft, b.name);
    const double w = longest > 0 ? bar_w * b.seconds / longest : 0.0;
    p.fillRect(QRectF(name_w, y + 3, w, line - 6), b.color);
    p.drawText(QRect(name_w + bar_w + 4, y, text_w - 4, line), Qt::AlignVCenter | Qt::AlignLeft,
               QStringLiteral("%1 (%2%)")
                   .arg(qs(format_duration(b.seconds)))
                   .arg(total > 0 ? 100.0 * b.seconds / total : 0.0, 0, 'f', 1));
    y += line;
  }
}

MemoryChart::MemoryChart(QWidget* parent) : QWidget(parent) {}

void MemoryChart::set_series(const CounterSeries* series, double peak_bytes, double capacity_bytes) {
  series_ = series ? *series : CounterSeries{};
  peak_ = peak_bytes;
  capacity_ = capacity_bytes;
  update();
}

QSize MemoryChart::sizeHint() const { return {280, 60}; }

void MemoryChart::paintEvent(QPaintEvent*) {
  QPainter p(this);
  const QRectF r = QRectF(rect()).adjusted(1, 1, -1, -1);
  p.fillRect(r, QColor(245, 245, 245));
  const QColor fill(90, 120, 200);
  if (!series_.points.empty()) {
    const double t0 = series_.points.front().first;
    const double t1 = series_.points.back().first;
    double top = capacity_;
    for (const auto& pt : series_.points) top = std::max(top, pt.second);
    if (top <= 0.0 || t1 <= t0) return;
    for (std::size_t i = 0; i + 1 < series_.points.size(); ++i) {
      const double x0 = r.left() + r.width() * (series_.points[i].first - t0) / (t1 - t0);
      const double x1 = r.left() + r.width() * (series_.points[i + 1].first - t0) / (t1 - t0);
      const double h = r.height() * series_.points[i].second / top;
      p.fillRect(QRectF(x0, r.bottom() - h, std::max(x1 - x0, 1.0), h), fill);
    }
    return;
  }
  if (capacity_ <= 0.0) return;
  // Peak against capacity: a single level.
  const double w = r.width() * std::min(peak_ / capacity_, 1.0);
  p.fillRect(QRectF(r.left(), r.top(), w, r.height()), peak_ <= capacity_ ? fill : QColor(211, 47, 47));
  p.setPen(palette().color(QPalette::WindowText));
  p.drawText(r, Qt::AlignCenter,
             QStringLiteral("peak %1 GiB of %2 GiB")
                 .arg(peak_ / (1024.0 * 1024 * 1024), 0, 'f', 1)
                 .arg(capacity_ / (1024.0 * 1024 * 1024), 0, 'f', 1));
}

SummaryPanel::SummaryPanel(QWidget* parent) : QWidget(parent) {
  auto* layout = new QVBoxLayout(this);
  figures_ = new QLabel(this);
  figures_->setTextFormat(Qt::RichText);
  figures_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  layout->addWidget(figures_);
  breakdown_title_ = new QLabel(tr("<b>Breakdown</b> (result file, rank 0)"), this);
  layout->addWidget(breakdown_title_);
  breakdown_ = new BreakdownBars(this);
  layout->addWidget(breakdown_);
  layout->addWidget(new QLabel(tr("<b>Busy time per category</b> (lowest rank's lanes)"), this));
  categories_ = new BreakdownBars(this);
  layout->addWidget(categories_);
  layout->addWidget(new QLabel(tr("<b>Memory per GPU</b>"), this));
  memory_ = new MemoryChart(this);
  layout->addWidget(memory_);
  memory_note_ = new QLabel(this);
  memory_note_->setWordWrap(true);
  layout->addWidget(memory_note_);
  layout->addStretch(1);
}

void SummaryPanel::set_run(const Run& run, const CriticalPath& path) {
  QString html = QStringLiteral("<b>%1</b><br>").arg(qs(run.timeline->scenario.empty() ? run.label : run.timeline->scenario).toHtmlEscaped());
  auto row = [&html](const QString& k, const QString& v) { html += QStringLiteral("<tr><td>%1&nbsp;</td><td>%2</td></tr>").arg(k, v); };
  auto loss = [](const std::optional<double>& v) { return v ? QString::number(*v, 'f', 3) : QStringLiteral("-"); };
  if (run.result && run.result->measured) {
    // A measured run (RUN.json, trainsim-train): what it measured, nothing predicted.
    const ResultSummary& r = *run.result;
    const MeasuredFigures& m = *r.measured;
    html += tr("measured by %1<br>").arg(qs(m.tool).toHtmlEscaped());
    html += QStringLiteral("<table>");
    row(tr("GPUs"), QStringLiteral("%1 x %2").arg(r.num_gpus).arg(qs(m.device).toHtmlEscaped()));
    row(tr("step time"), tr("%1 median (%2 to %3 over %4 timed steps)")
                             .arg(qs(format_duration(r.iteration_time_s)), qs(format_duration(m.step_min_s)),
                                  qs(format_duration(m.step_max_s)))
                             .arg(m.steps_timed));
    row(tr("tokens/s"), si(r.tokens_per_s));
    row(tr("loss"), tr("%1 to %2, held out %3").arg(loss(m.loss_initial), loss(m.loss_final), loss(m.loss_held_out)));
    row(tr("peak memory"), r.peak_bytes_per_gpu > 0
                               ? QStringLiteral("%1 GiB (%2)")
                                     .arg(r.peak_bytes_per_gpu / (1024.0 * 1024.0 * 1024.0), 0, 'f', 2)
                                     .arg(qs(m.peak_memory_source).toHtmlEscaped())
                               : QStringLiteral("-"));
    html += QStringLiteral("</table>");
  } else if (run.result) {
    const ResultSummary& r = *run.result;
    html += QStringLiteral("<table>");
    row(tr("GPUs"), QString::number(r.num_gpus));
    row(tr("iteration time"), qs(format_duration(r.iteration_time_s)));
    row(tr("MFU"), QStringLiteral("%1% (%2 TFLOP/s per GPU)").arg(100.0 * r.mfu, 0, 'f', 1).arg(r.tflops_per_gpu, 0, 'f', 1));
    row(tr("tokens/s"), si(r.tokens_per_s));
    row(tr("time to train"), r.time_to_train_s ? qs(format_duration(*r.time_to_train_s)) : tr("- (no train_tokens)"));
    row(tr("cost"), r.cost_usd ? QStringLiteral("$%1").arg(*r.cost_usd, 0, 'f', 0) : tr("- (no price)"));
    row(tr("energy"), r.energy_kwh ? QStringLiteral("%1 kWh").arg(*r.energy_kwh, 0, 'f', 0) : QStringLiteral("-"));
    row(tr("goodput"), QStringLiteral("%1% (%2 interruptions expected)").arg(100.0 * r.goodput, 0, 'f', 1).arg(r.expected_interruptions));
    html += QStringLiteral("</table>");
  } else {
    html += tr("a timeline without a result file (measured run): figures from the spans only<br>");
    html += tr("span of the timeline: %1<br>").arg(qs(format_duration(run.timeline->t_end - run.timeline->t_begin)));
  }
  html += tr("<br>critical path: %1 spans, %2 busy (%3)")
              .arg(path.spans.size())
              .arg(qs(format_duration(path.busy_s)))
              .arg(path.from_deps ? tr("from deps") : tr("end==start adjacency"));
  figures_->setText(html);

  breakdown_title_->setText(run.result && run.result->measured
                                ? tr("<b>Time per kernel class</b> (measured, per step)")
                                : tr("<b>Breakdown</b> (result file, rank 0)"));
  std::vector<BreakdownBars::Bar> bars;
  if (run.result)
    for (const auto& [k, v] : run.result->breakdown_s) bars.push_back({qs(k), v, breakdown_color(k)});
  breakdown_->set_bars(std::move(bars));
  const CategoryTotals totals = category_totals(*run.timeline);
  std::vector<BreakdownBars::Bar> cats;
  for (const Category c : all_categories())
    if (totals.busy_s[static_cast<std::size_t>(c)] > 0)
      cats.push_back({qs(category_name(c)), totals.busy_s[static_cast<std::size_t>(c)], to_qcolor(category_color(c))});
  categories_->set_bars(std::move(cats));

  const CounterSeries* memory = nullptr;
  for (const CounterSeries& c : run.timeline->counters)
    if (c.name.rfind("memory", 0) == 0) memory = &c;
  memory_->set_series(memory, run.result ? run.result->peak_bytes_per_gpu : 0.0,
                      run.result ? run.result->capacity_bytes_per_gpu : 0.0);
  if (memory)
    memory_note_->setText(QStringLiteral("%1 over time").arg(qs(memory->name)));
  else if (run.result && run.result->measured)
    memory_note_->setText(tr("The measured timeline has no memory counter; the measured peak is in the "
                             "figures above."));
  else
    memory_note_->setText(tr("This timeline has no memory counter: peak against capacity from the result file."));
}

}  // namespace trainsim::gui
