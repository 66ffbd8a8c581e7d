#pragma once
// One scenario, simulated: cost models chosen, task graph built and executed.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "execution/timeline.h"
#include "scenario/scenario.h"
#include "workload/iteration_builder.h"
#include "workload/memory.h"

namespace trainsim::exec {

// A value over time, for the trace's counter tracks (e.g. a link's utilization).
struct CounterSeries {
  std::string name;
  std::vector<std::pair<core::Time, double>> points;  // (time, value) at every change
};

struct LinkUsage {
  std::string name;  // "from->to"
  double bytes = 0.0;
  double capacity = 0.0;  // B/s
};

// What the network model saw (flow model; the analytic one records no traffic).
struct NetworkReport {
  std::string topology;
  std::uint64_t flows = 0;
  std::uint64_t solves = 0;
  std::vector<LinkUsage> links;  // links that carried traffic, by link id
  std::vector<CounterSeries> counters;
};

struct SimulationOutput {
  workload::IterationGraph iteration;
  Timeline timeline;
  workload::MemoryEstimate memory;
  std::string compute_model;
  std::string network_model;
  NetworkReport network;
};

SimulationOutput simulate(const scenario::Scenario& s);

}  // namespace trainsim::exec
