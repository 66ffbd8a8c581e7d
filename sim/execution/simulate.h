#pragma once
// One scenario, simulated: cost models chosen, task graph built and executed.
#include <string>

#include "execution/timeline.h"
#include "scenario/scenario.h"
#include "workload/iteration_builder.h"
#include "workload/memory.h"

namespace trainsim::exec {

struct SimulationOutput {
  workload::IterationGraph iteration;
  Timeline timeline;
  workload::MemoryEstimate memory;
  std::string compute_model;
  std::string network_model;
};

SimulationOutput simulate(const scenario::Scenario& s);

}  // namespace trainsim::exec
