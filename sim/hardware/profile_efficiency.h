#pragma once
// The efficiencies a calibration profile measured, in the form the GPU spec's
// roofline takes them (docs/model.md, "Calibrated costs", "Fallback"): what a
// kernel the profile does not cover is priced with.
#include <optional>
#include <vector>

#include "hardware/calibration_profile.h"
#include "hardware/gpu_spec.h"
#include "hardware/precision.h"

namespace trainsim::hw {

// The matmul efficiency curve of the profile's GEMMs of `dtype`, as the spec's
// `matmul_efficiency` points: the rows grouped by octave of F = 2 m n k
// (floor(log2 F)), one point per octave at the geometric mean of its F with the
// median of its rows' achieved FLOP/s / `peak` (capped at 1). Empty when the
// profile has no GEMMs of `dtype` or `peak` is not positive.
std::vector<EfficiencyPoint> measured_matmul_efficiency(const std::vector<GemmRow>& gemm, Precision dtype,
                                                        double peak);

// The achieved bandwidth (B/s) of the profile's largest copy of `kind`: the mean
// over the rows of the largest size. Nothing when the profile has no such copy.
std::optional<double> measured_copy_bandwidth(const std::vector<CopyRow>& copies, CopyKind kind);

}  // namespace trainsim::hw
