#include "view/plan_plot.h"

#include <QPainter>
#include <algorithm>
#include <cmath>
#include <vector>

#include "view/plot_frame.h"

namespace trainsim::gui {

namespace {

constexpr int kLeft = 90, kRight = 40, kTop = 44, kBottom = 56;  // px around the plot area

// An axis from 0 to a round value above `max`: 1, 2 or 5 times a power of ten,
// in five steps.
struct Axis {
  double top = 1.0;
  double px0 = 0.0, px1 = 1.0;
  [[nodiscard]] double at(double v) const { return px0 + v / top * (px1 - px0); }
};
double round_top(double max) {
  if (!(max > 0.0)) return 1.0;
  const double decade = std::pow(10.0, std::floor(std::log10(max)));
  for (const double m : {1.0, 2.0, 5.0, 10.0})
    if (m * decade >= max * 1.05) return m * decade;
  return 10.0 * decade;
}

QString money_label(double usd) {
  if (usd >= 1e6) return QStringLiteral("$%1M").arg(usd / 1e6, 0, 'g', 3);
  if (usd >= 1e3) return QStringLiteral("$%1k").arg(usd / 1e3, 0, 'g', 3);
  return QStringLiteral("$%1").arg(usd, 0, 'g', 3);
}

}  // namespace

QImage render_plan_plot(const PlanPlotData& d, QSize size) {
  QImage image = blank_image(size);
  QPainter p(&image);
  p.setRenderHint(QPainter::Antialiasing);
  const QRect plot(kLeft, kTop, size.width() - kLeft - kRight, size.height() - kTop - kBottom);

  double days = 0.0, usd = 0.0;
  for (const PlanPoint& o : d.points) {
    days = std::max(days, o.time_to_train_s / 86400.0);
    usd = std::max(usd, o.cost_usd);
  }
  const Axis x{round_top(days), static_cast<double>(plot.left()), static_cast<double>(plot.right())};
  const Axis y{round_top(usd), static_cast<double>(plot.bottom()), static_cast<double>(plot.top())};

  p.setFont(QFont(p.font().family(), 9));
  for (int k = 0; k <= 5; ++k) {
    const double vx = x.top * k / 5.0, vy = y.top * k / 5.0;
    p.setPen(QPen(QColor(225, 225, 225), 1));
    p.drawLine(QPointF(x.at(vx), plot.top()), QPointF(x.at(vx), plot.bottom()));
    p.drawLine(QPointF(plot.left(), y.at(vy)), QPointF(plot.right(), y.at(vy)));
    p.setPen(QColor(80, 80, 80));
    p.drawText(QRectF(x.at(vx) - 40, plot.bottom() + 4, 80, 16), Qt::AlignHCenter | Qt::AlignTop,
               QStringLiteral("%1").arg(vx, 0, 'g', 4));
    p.drawText(QRectF(plot.left() - 86, y.at(vy) - 8, 80, 16), Qt::AlignRight | Qt::AlignVCenter, money_label(vy));
  }

  // The front's staircase: from each front option right to the next one's time.
  std::vector<PlanPoint> front;
  for (const PlanPoint& o : d.points)
    if (o.pareto) front.push_back(o);
  std::sort(front.begin(), front.end(),
            [](const PlanPoint& a, const PlanPoint& b) { return a.time_to_train_s < b.time_to_train_s; });
  const QColor accent(31, 119, 180);
  p.setPen(QPen(accent, 1.5, Qt::DashLine));
  for (std::size_t i = 0; i + 1 < front.size(); ++i) {
    const QPointF a(x.at(front[i].time_to_train_s / 86400.0), y.at(front[i].cost_usd));
    const QPointF b(x.at(front[i + 1].time_to_train_s / 86400.0), y.at(front[i + 1].cost_usd));
    p.drawLine(a, QPointF(b.x(), a.y()));
    p.drawLine(QPointF(b.x(), a.y()), b);
  }
  // Each label above right of its point, moved down past the labels already drawn.
  std::vector<QRectF> labels;
  for (const PlanPoint& o : d.points) {
    const QPointF at(x.at(o.time_to_train_s / 86400.0), y.at(o.cost_usd));
    p.setPen(QPen(o.pareto ? accent : QColor(110, 110, 110), 1.5));
    p.setBrush(o.pareto ? QBrush(accent) : Qt::NoBrush);
    p.drawEllipse(at, 5.0, 5.0);
    const QString text = QString::fromStdString(o.cluster);
    QRectF box(at.x() + 8, at.y() - 18, p.fontMetrics().horizontalAdvance(text) + 2, 16);
    while (std::any_of(labels.begin(), labels.end(), [&](const QRectF& r) { return r.intersects(box); }))
      box.translate(0, 16);
    labels.push_back(box);
    p.setPen(QColor(40, 40, 40));
    p.drawText(box, Qt::AlignLeft | Qt::AlignVCenter, text);
  }
  p.setPen(QColor(60, 60, 60));
  p.setBrush(Qt::NoBrush);
  p.drawRect(plot);

  const bool any_owned = std::any_of(d.points.begin(), d.points.end(), [](const PlanPoint& o) { return o.owned; });
  p.setFont(QFont(p.font().family(), 11));
  p.drawText(QRect(kLeft, 6, plot.width(), 30), Qt::AlignLeft | Qt::AlignVCenter,
             QStringLiteral("%1: time to train against cost, %2 options (Pareto front filled)%3")
                 .arg(QString::fromStdString(d.name))
                 .arg(d.points.size())
                 .arg(d.without_cost > 0 ? QStringLiteral("; %1 without a time or a cost left out").arg(d.without_cost)
                                         : QString()));
  draw_axis_titles(p, plot, size, QStringLiteral("time to train (days, p50)"),
                   any_owned ? QStringLiteral("cost (owned where given, else cloud)") : QStringLiteral("cost (cloud)"));
  return image;
}

}  // namespace trainsim::gui
