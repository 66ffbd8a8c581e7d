#pragma once
// A plan as a picture (trainsim-gui --render PLAN.json --out plan.png): each
// cluster option at its time to train (days) and cost (USD), both on linear axes
// from zero, labelled with its name; the options on the Pareto front filled and
// joined by their staircase, the others hollow.
#include <QImage>
#include <QSize>

#include "model/plan_points.h"

namespace trainsim::gui {

QImage render_plan_plot(const PlanPlotData& data, QSize size);

}  // namespace trainsim::gui
