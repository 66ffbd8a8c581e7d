#include "view/plot_frame.h"

namespace trainsim::gui {

QImage blank_image(QSize size) {
  QImage image(size, QImage::Format_ARGB32_Premultiplied);
  image.fill(Qt::white);
  return image;
}

void draw_axis_titles(QPainter& p, const QRect& plot, QSize size, const QString& x_title, const QString& y_title) {
  p.setFont(QFont(p.font().family(), 10));
  p.drawText(QRect(plot.left(), size.height() - 24, plot.width(), 20), Qt::AlignHCenter, x_title);
  p.save();
  p.translate(14, plot.center().y());
  p.rotate(-90);
  p.drawText(QRect(-plot.height() / 2, -10, plot.height(), 20), Qt::AlignHCenter, y_title);
  p.restore();
}

}  // namespace trainsim::gui
