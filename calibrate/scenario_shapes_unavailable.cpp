// Builds without the simulator (TRAINSIM_GPU_ONLY): `--for SCENARIO` needs the
// simulator's operation lists, so it points to the way that works here.
#include <stdexcept>

#include "shape_list.h"

namespace trainsim::calibrate {

std::string write_scenario_shapes(const std::string& scenario, const std::string&) {
  throw std::runtime_error("--for " + scenario +
                           ": this trainsim-calibrate was built without the simulator (TRAINSIM_GPU_ONLY); run "
                           "`trainsim-calibrate --for SCENARIO --list-shapes` from a full build and pass the "
                           "file with --shapes");
}

std::string scenario_gemm_dtype(const std::string&) { return "bf16"; }

}  // namespace trainsim::calibrate
