#pragma once
// Predicted GPU time per kernel class of one training step on one GPU, in the
// classes trainsim-train measures (docs/validation.md): the compute ops of every
// micro-batch and the optimizer step, each priced by the scenario's compute
// model exactly as the simulated iteration prices it.
#include <array>
#include <string_view>

#include "config/kernel_class_names.h"
#include "config/scenario.h"
#include "workload/transformer_ops.h"

namespace trainsim::exec {

// The measured-run classes, in config::kKernelClasses order.
inline constexpr std::size_t kNumKernelClasses = config::kKernelClasses.size();
using KernelClassSeconds = std::array<double, kNumKernelClasses>;

// The class index of one op; communication markers have none (-1).
int kernel_class_of(const workload::Op& op);

// Sums per class over one iteration of one GPU. Supports the layouts
// trainsim-train runs: data parallelism only (TP = PP = CP = EP = 1, no ZeRO);
// others throw std::invalid_argument. The all_reduce class stays 0: collectives
// are priced by the network model, and `trainsim validate` takes the exposed
// communication of the simulated iteration for it.
KernelClassSeconds kernel_class_seconds(const config::Scenario& s);

}  // namespace trainsim::exec
