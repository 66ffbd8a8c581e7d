#include "view/corpus_plot.h"

#include <QPainter>
#include <QPainterPath>
#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

#include "view/plot_frame.h"

namespace trainsim::gui {

namespace {

constexpr int kLeft = 78, kRight = 190, kTop = 44, kBottom = 56;  // px around the plot area

// A fixed colour per family, in the order the families sort.
QColor family_color(std::size_t index) {
  static const QColor kPalette[] = {QColor(31, 119, 180), QColor(255, 127, 14), QColor(44, 160, 44),
                                    QColor(214, 39, 40),  QColor(148, 103, 189), QColor(140, 86, 75)};
  return kPalette[index % std::size(kPalette)];
}

QString seconds_label(double s) {
  if (s >= 1.0) return QStringLiteral("%1 s").arg(s, 0, 'g', 4);
  return QStringLiteral("%1 ms").arg(s * 1e3, 0, 'g', 3);
}

// Log10 axis over whole decades that hold every value.
struct Axis {
  double lo = 0.0, hi = 1.0;  // log10 of the ends
  double px0 = 0.0, px1 = 1.0;
  [[nodiscard]] double at(double value) const { return px0 + (std::log10(value) - lo) / (hi - lo) * (px1 - px0); }
};

}  // namespace

QImage render_corpus_plot(const CorpusPlotData& d, QSize size) {
  QImage image = blank_image(size);
  QPainter p(&image);
  p.setRenderHint(QPainter::Antialiasing);
  const QRect plot(kLeft, kTop, size.width() - kLeft - kRight, size.height() - kTop - kBottom);

  double lo = 1e300, hi = 0.0;
  for (const CorpusPoint& c : d.points) {
    lo = std::min({lo, c.measured_s, c.predicted_s});
    hi = std::max({hi, c.measured_s, c.predicted_s});
  }
  if (d.points.empty()) lo = 0.1, hi = 10.0;
  const double dlo = std::floor(std::log10(lo)), dhi = std::max(dlo + 1.0, std::ceil(std::log10(hi)));
  const Axis x{dlo, dhi, static_cast<double>(plot.left()), static_cast<double>(plot.right())};
  const Axis y{dlo, dhi, static_cast<double>(plot.bottom()), static_cast<double>(plot.top())};

  // Grid and tick labels at 1, 2 and 5 of every decade.
  p.setFont(QFont(p.font().family(), 9));
  for (double e = dlo; e <= dhi; e += 1.0)
    for (const double m : {1.0, 2.0, 5.0}) {
      const double v = m * std::pow(10.0, e);
      if (std::log10(v) > dhi + 1e-9) break;
      p.setPen(QPen(m == 1.0 ? QColor(200, 200, 200) : QColor(235, 235, 235), 1));
      p.drawLine(QPointF(x.at(v), plot.top()), QPointF(x.at(v), plot.bottom()));
      p.drawLine(QPointF(plot.left(), y.at(v)), QPointF(plot.right(), y.at(v)));
      p.setPen(QColor(80, 80, 80));
      p.drawText(QRectF(x.at(v) - 40, plot.bottom() + 4, 80, 16), Qt::AlignHCenter | Qt::AlignTop, seconds_label(v));
      p.drawText(QRectF(plot.left() - 76, y.at(v) - 8, 70, 16), Qt::AlignRight | Qt::AlignVCenter, seconds_label(v));
    }
  // No error, and the +-10% (dashed) and +-25% (dotted) bands.
  const double a = std::pow(10.0, dlo), b = std::pow(10.0, dhi);
  const auto line = [&](double factor, Qt::PenStyle style) {
    p.setPen(QPen(QColor(90, 90, 90), 1, style));
    p.drawLine(QPointF(x.at(a), y.at(a * factor)), QPointF(x.at(b), y.at(b * factor)));
  };
  p.save();
  p.setClipRect(plot);
  line(1.0, Qt::SolidLine);
  for (const double f : {0.9, 1.1}) line(f, Qt::DashLine);
  for (const double f : {0.75, 1.25}) line(f, Qt::DotLine);

  std::map<std::string, std::size_t> families;
  for (const CorpusPoint& c : d.points) families.emplace(c.family, 0);
  std::size_t k = 0;
  for (auto& [name, index] : families) index = k++;
  for (const CorpusPoint& c : d.points) {
    const QColor color = family_color(families[c.family]);
    p.setPen(QPen(color, 1.5));
    p.setBrush(c.held_out ? Qt::NoBrush : QBrush(color));
    p.drawEllipse(QPointF(x.at(c.measured_s), y.at(c.predicted_s)), 4.0, 4.0);
  }
  p.restore();
  p.setPen(QColor(60, 60, 60));
  p.setBrush(Qt::NoBrush);
  p.drawRect(plot);

  // Titles and legend.
  int held = 0;
  double abs_sum = 0.0;
  int fitting = 0;
  for (const CorpusPoint& c : d.points) {
    if (c.held_out) {
      ++held;
      continue;
    }
    abs_sum += std::abs(c.predicted_s / c.measured_s - 1.0);
    ++fitting;
  }
  p.setFont(QFont(p.font().family(), 11));
  p.drawText(QRect(kLeft, 6, plot.width(), 30), Qt::AlignLeft | Qt::AlignVCenter,
             QStringLiteral("predicted against measured step time: %1 cases (%2 held out, hollow), %3 refused; "
                            "mean |error| %4% without the held-out ones")
                 .arg(d.points.size())
                 .arg(held)
                 .arg(d.refused)
                 .arg(fitting > 0 ? 100.0 * abs_sum / fitting : 0.0, 0, 'f', 1));
  draw_axis_titles(p, plot, size, QStringLiteral("measured step time (log scale)"),
                   QStringLiteral("predicted step time (log scale)"));
  int ly = plot.top() + 4;
  const int lx = plot.right() + 16;
  for (const auto& [name, index] : families) {
    p.setPen(QPen(family_color(index), 1.5));
    p.setBrush(family_color(index));
    p.drawEllipse(QPointF(lx + 5, ly + 8), 4.0, 4.0);
    p.setPen(QColor(40, 40, 40));
    p.drawText(QRect(lx + 16, ly, kRight - 36, 16), Qt::AlignLeft | Qt::AlignVCenter, QString::fromStdString(name));
    ly += 20;
  }
  ly += 10;
  p.setBrush(Qt::NoBrush);
  const std::pair<Qt::PenStyle, QString> lines[] = {
      {Qt::SolidLine, QStringLiteral("no error")}, {Qt::DashLine, QStringLiteral("+-10%")},
      {Qt::DotLine, QStringLiteral("+-25%")}};
  for (const auto& [style, label] : lines) {
    p.setPen(QPen(QColor(90, 90, 90), 1, style));
    p.drawLine(lx, ly + 8, lx + 12, ly + 8);
    p.setPen(QColor(40, 40, 40));
    p.drawText(QRect(lx + 16, ly, kRight - 36, 16), Qt::AlignLeft | Qt::AlignVCenter, label);
    ly += 20;
  }
  return image;
}

}  // namespace trainsim::gui
