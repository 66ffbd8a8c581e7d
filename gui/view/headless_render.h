#pragma once
// Renders runs to an image without a window (trainsim-gui --render, CI, docs):
// a title line, the timeline fitted to the width, the legend at the bottom.
#include <QImage>
#include <QSize>

#include "model/run.h"
#include "view/timeline_painter.h"

namespace trainsim::gui {

inline constexpr int kTitleHeight = 22;  // px, the title line above the ruler
inline constexpr int kRunStripGap = 6;   // px between the whole-run strip and the iteration timeline

struct RenderOptions {
  QSize size{1600, 900};
  bool critical_path = true;
  PaintGeometry geometry;
};

// Layout of one rendered run: the timeline gets [kTitleHeight, height - legend);
// with a run timeline (failures), the strip takes run_strip_height() + kRunStripGap
// of its top, fitted to the whole run.
QImage render_run(const Run& run, const RenderOptions& options);
// A over B on one time axis (both from t = 0), then per-category busy time of
// the lowest rank as bars with the difference.
QImage render_comparison(const Run& a, const Run& b, const RenderOptions& options);

// The legend's height at this width with the default font.
int legend_height(int width);

}  // namespace trainsim::gui
