#include "view/span_details.h"

#include <cmath>

#include "model/time_mapping.h"

namespace trainsim::gui {

QString si(double v) {
  static constexpr const char* kPrefixes[] = {"", "k", "M", "G", "T", "P", "E"};
  int i = 0;
  double a = std::abs(v);
  while (a >= 1000.0 && i < 6) {
    a /= 1000.0;
    v /= 1000.0;
    ++i;
  }
  return QStringLiteral("%1 %2").arg(v, 0, 'g', 3).arg(QLatin1String(kPrefixes[i]));
}

QString span_details_html(const TimelineData& t, SpanRef r) {
  const Span& s = t.span(r);
  const Lane& lane = t.lanes[r.lane];
  const double d = s.end - s.start;
  const auto name = category_name(s.category);
  QString html = QStringLiteral("<b>%1</b> (%2)<br>GPU %3 (node %4), %5<br>start %6, duration %7")
                     .arg(QString::fromStdString(t.name_of(s)).toHtmlEscaped(),
                          QString::fromUtf8(name.data(), static_cast<qsizetype>(name.size())))
                     .arg(lane.rank)
                     .arg(lane.node)
                     .arg(QString::fromStdString(lane.stream), QString::fromStdString(format_duration(s.start)),
                          QString::fromStdString(format_duration(d)));
  if (s.flops > 0)
    html += QStringLiteral("<br>%1FLOP, achieved %2FLOP/s").arg(si(s.flops), d > 0 ? si(s.flops / d) : QStringLiteral("- "));
  if (s.bytes > 0)
    html += QStringLiteral("<br>%1B, achieved %2B/s").arg(si(s.bytes), d > 0 ? si(s.bytes / d) : QStringLiteral("- "));
  html += QStringLiteral("<br>iteration %1").arg(s.iteration);
  if (s.microbatch >= 0) html += QStringLiteral(", micro-batch %1").arg(s.microbatch);
  if (s.layer >= 0) html += QStringLiteral(", layer %1").arg(s.layer);
  if (s.deps_count > 0) {
    html += QStringLiteral("<br>depends on ids");
    for (std::uint32_t i = 0; i < s.deps_count && i < 8; ++i) html += QStringLiteral(" %1").arg(t.deps[s.deps_begin + i]);
    if (s.deps_count > 8) html += QStringLiteral(" ... (%1)").arg(s.deps_count);
  } else {
    html += QStringLiteral("<br>no dependencies recorded");
  }
  return html;
}

}  // namespace trainsim::gui
