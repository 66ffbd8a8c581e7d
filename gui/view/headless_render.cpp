#include "view/headless_render.h"

#include <QPainter>
#include <algorithm>

#include "model/critical_path.h"
#include "model/run_comparison.h"

namespace trainsim::gui {

namespace {

QString title_of(const Run& run) {
  QString title = QString::fromStdString(run.timeline->scenario.empty() ? run.label : run.timeline->scenario);
  if (run.result) {
    const ResultSummary& r = *run.result;
    title += QStringLiteral("   iteration %1, MFU %2%, %3 GPUs")
                 .arg(QString::fromStdString(format_duration(r.iteration_time_s)))
                 .arg(100.0 * r.mfu, 0, 'f', 1)
                 .arg(r.num_gpus);
    if (run.run_timeline)
      title += QStringLiteral("   above: the whole run (trial 0, %1); below: the iteration")
                   .arg(QString::fromStdString(format_duration(run.run_timeline->t_end - run.run_timeline->t_begin)));
  }
  return title;
}

// `with_run_strip`: a result with failures gets its whole run (the run
// timeline fitted to the width) between the title and the iteration timeline.
void paint_run(QPainter& p, const QRect& area, const Run& run, const TimeMapping& m, const RenderOptions& o,
               bool with_run_strip) {
  p.fillRect(QRect(area.left(), area.top(), area.width(), kTitleHeight), QColor(255, 255, 255));
  p.setPen(QColor(33, 33, 33));
  p.drawText(QRect(area.left() + 4, area.top(), area.width() - 8, kTitleHeight), Qt::AlignVCenter | Qt::AlignLeft,
             title_of(run));
  int top = area.top() + kTitleHeight;
  if (with_run_strip && run.run_timeline) {
    const TimelineData& whole = *run.run_timeline;
    const int h = run_strip_height(whole, o.geometry);
    const double x0 = area.left() + o.geometry.label_width;
    const TimeMapping strip = TimeMapping::fit(whole.t_begin, whole.t_end, x0, area.right() + 1 - x0);
    paint_timeline(p, QRect(area.left(), top, area.width(), h), whole, layout_lanes(whole, {}), strip, ViewState{},
                   o.geometry);
    top += h + kRunStripGap;
  }
  ViewState v;
  if (o.critical_path) v.critical_path = critical_path(*run.timeline).spans;
  const QRect timeline(area.left(), top, area.width(), area.bottom() + 1 - top);
  paint_timeline(p, timeline, *run.timeline, layout_lanes(*run.timeline, {}), m, v, o.geometry);
}

}  // namespace

int legend_height(int width) {
  QImage scratch(std::max(width, 1), 1, QImage::Format_ARGB32_Premultiplied);
  QPainter p(&scratch);
  return paint_legend(p, QRect(0, 0, width, 400)) + 4;
}

QImage render_run(const Run& run, const RenderOptions& o) {
  QImage image(o.size, QImage::Format_ARGB32_Premultiplied);
  image.fill(Qt::white);
  QPainter p(&image);
  const int legend = legend_height(o.size.width());
  const QRect area(0, 0, o.size.width(), o.size.height() - legend);
  const double x0 = o.geometry.label_width;
  const TimeMapping m = TimeMapping::fit(run.timeline->t_begin, run.timeline->t_end, x0, o.size.width() - x0);
  paint_run(p, area, run, m, o, true);
  paint_legend(p, QRect(0, o.size.height() - legend, o.size.width(), legend));
  return image;
}

QImage render_comparison(const Run& a, const Run& b, const RenderOptions& o) {
  QImage image(o.size, QImage::Format_ARGB32_Premultiplied);
  image.fill(Qt::white);
  QPainter p(&image);
  const int legend = legend_height(o.size.width());
  const std::vector<CategoryDifference> rows =
      compare_categories(category_totals(*a.timeline), category_totals(*b.timeline));
  const int line = p.fontMetrics().height() + 6;
  const int table = line * (static_cast<int>(rows.size()) + 1) + 8;
  const int each = (o.size.height() - legend - table) / 2;
  // Aligned axes: both runs from t = 0 to the later end.
  const double x0 = o.geometry.label_width;
  const double t_end = std::max(a.timeline->t_end, b.timeline->t_end);
  const TimeMapping m = TimeMapping::fit(0.0, t_end, x0, o.size.width() - x0);
  paint_run(p, QRect(0, 0, o.size.width(), each), a, m, o, false);
  paint_run(p, QRect(0, each, o.size.width(), each), b, m, o, false);
  // Per-category busy time on the lowest rank: A and B bars, then B - A.
  int y = 2 * each + 4;
  p.setPen(QColor(33, 33, 33));
  p.drawText(QRect(4, y, o.size.width() - 8, line), Qt::AlignVCenter | Qt::AlignLeft,
             QStringLiteral("busy time per category, lowest rank: A = %1, B = %2; B - A")
                 .arg(QString::fromStdString(a.label), QString::fromStdString(b.label)));
  y += line;
  double longest = 0.0;
  for (const CategoryDifference& r : rows) longest = std::max({longest, r.a_s, r.b_s});
  const int name_w = 120;
  const int bar_w = (o.size.width() - name_w - 220) / 2;
  for (const CategoryDifference& r : rows) {
    const QColor c = to_qcolor(category_color(r.category));
    p.setPen(QColor(33, 33, 33));
    p.drawText(QRect(4, y, name_w, line), Qt::AlignVCenter | Qt::AlignLeft,
               QString::fromUtf8(category_name(r.category).data(), static_cast<qsizetype>(category_name(r.category).size())));
    const double wa = longest > 0 ? bar_w * r.a_s / longest : 0.0;
    const double wb = longest > 0 ? bar_w * r.b_s / longest : 0.0;
    p.fillRect(QRectF(name_w, y + 2, wa, line / 2.0 - 2), c);
    p.fillRect(QRectF(name_w, y + line / 2.0, wb, line / 2.0 - 2), c.darker(140));
    p.drawText(QRect(name_w + bar_w + 10, y, 400, line), Qt::AlignVCenter | Qt::AlignLeft,
               QStringLiteral("A %1   B %2   %3%4")
                   .arg(QString::fromStdString(format_duration(r.a_s)), QString::fromStdString(format_duration(r.b_s)),
                        r.diff_s() >= 0 ? QStringLiteral("+") : QString(), QString::fromStdString(format_duration(r.diff_s()))));
    y += line;
  }
  paint_legend(p, QRect(0, o.size.height() - legend, o.size.width(), legend));
  return image;
}

}  // namespace trainsim::gui
