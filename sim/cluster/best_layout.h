#pragma once
// A job's layout at each of its sizes, searched (docs/cluster.md, "Best layouts"): the
// jobs with a layout_space get, per size, the layout of their sweep space with the
// shortest iteration that fits, evaluated by the sweep's own machinery
// (sweep::evaluate_points). An elastic job's sizes where nothing fits are dropped.
#include "config/cluster_workload.h"

namespace trainsim::cluster {

// Throws std::invalid_argument naming the job when no size has a layout that fits.
void resolve_best_layouts(config::ClusterWorkload& w, int threads);

}  // namespace trainsim::cluster
