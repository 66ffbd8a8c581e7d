#include "hardware/gpu_spec.h"

#include <stdexcept>
#include <string>

namespace trainsim::hw {

double GpuSpec::peak(Precision p) const {
  const auto it = peak_flops.find(p);
  if (it == peak_flops.end())
    throw std::invalid_argument(name + " has no " + std::string(to_string(p)) + " peak");
  return it->second;
}

}  // namespace trainsim::hw
