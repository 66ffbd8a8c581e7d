#pragma once
// The power a job's machines draw (docs/model.md, "Energy"): each GPU between its
// idle draw and its TDP by how busy it is, each node's draw besides its GPUs, all
// times the facility's PUE. One model for every energy trainsim reports: the
// failure-free time to train (report::rates) and the full-run replay
// (exec::simulate_full_run), so the two agree when nothing fails.
#include "hardware/cluster.h"

namespace trainsim::hw {

// The job's draw in watts, before the PUE.
struct PowerDraw {
  double running_w = 0.0;   // the GPUs while they train
  double idle_w = 0.0;      // the GPUs while training stands still (restarts, checkpoints)
  double constant_w = 0.0;  // all the time: node overheads, and spare nodes' idle GPUs
};

// P_run = N_gpu (P_idle + (TDP - P_idle) u), P_stop = N_gpu P_idle,
// P_const = (N_node + spare_nodes) P_node + spare_nodes x gpus_per_node x P_idle,
// with u the GPUs' compute-stream busy fraction, clamped to [0, 1]; a mixed
// cluster sums each pool's terms with its own GPU's figures.
PowerDraw power_draw(const ClusterSpec& c, double utilization, long long spare_nodes = 0);

// kWh of a run of `wall_s` seconds of which `running_s` train:
// PUE [P_run running_s + P_stop (wall_s - running_s) + P_const wall_s] / 3.6e6.
double energy_kwh(const PowerDraw& p, double pue, double running_s, double wall_s);

}  // namespace trainsim::hw
