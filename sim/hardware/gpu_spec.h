#pragma once
// One GPU model as the simulator sees it: datasheet peaks plus the measured
// efficiencies that turn peaks into achievable rates (sources in the preset
// files, scenarios/hardware/*.json, and in docs/model.md section "Compute cost").
#include <map>
#include <string>
#include <vector>

#include "hardware/precision.h"

namespace trainsim::hw {

// Fraction of the dense peak one GEMM of `flops` (= 2 M N K) reaches.
struct EfficiencyPoint {
  double flops = 0.0;
  double efficiency = 0.0;
};

struct GpuSpec {
  std::string name;
  std::map<Precision, double> peak_flops;  // dense FLOP/s; a missing entry = not supported
  double memory_capacity_bytes = 0.0;
  double memory_bandwidth = 0.0;             // B/s, datasheet
  double memory_bandwidth_efficiency = 1.0;  // measured copy rate / datasheet
  double tdp_watts = 0.0;
  // Energy of a full run (docs/model.md, "Reliability"): the GPU's draw at zero
  // utilization, and a node's draw besides its GPUs (CPUs, memory, NICs,
  // NVSwitches, fans); sources in the preset files. 0: not known.
  double idle_watts = 0.0;
  double node_overhead_watts = 0.0;
  std::vector<EfficiencyPoint> matmul_efficiency;  // sorted by flops, at least one point

  [[nodiscard]] bool supports(Precision p) const { return peak_flops.contains(p); }
  // Throws std::invalid_argument when the GPU has no peak for p.
  [[nodiscard]] double peak(Precision p) const;
};

}  // namespace trainsim::hw
