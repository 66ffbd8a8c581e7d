#pragma once
// What the report pictures share (view/corpus_plot.h, view/plan_plot.h): a white
// image with an antialiased painter, and the axis titles under and beside the
// plot area.
#include <QImage>
#include <QPainter>
#include <QRect>
#include <QSize>
#include <QString>

namespace trainsim::gui {

// A white image of `size`.
QImage blank_image(QSize size);
// The x title centred under `plot`, the y title turned up along its left side.
void draw_axis_titles(QPainter& p, const QRect& plot, QSize size, const QString& x_title, const QString& y_title);

}  // namespace trainsim::gui
