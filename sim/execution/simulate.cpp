#include "execution/simulate.h"

#include <memory>

#include "execution/executor.h"
#include "hardware/compute_model.h"
#include "network/collective_model.h"

namespace trainsim::exec {

SimulationOutput simulate(const scenario::Scenario& s) {
  SimulationOutput out;
  out.iteration = workload::build_iteration_graph(s.model, s.training, s.parallel, s.cluster, s.simulation.iterations);
  out.memory = workload::estimate_memory(s.model, s.training, s.parallel);

  const hw::RooflineComputeModel compute(s.cluster.gpu);
  net::AnalyticBackend network(std::make_unique<net::HierarchicalRingModel>(s.cluster));
  out.compute_model = std::string(compute.name());
  out.network_model = std::string(network.name());

  core::Simulator sim;
  Executor executor(compute, network, s.training.precision);
  out.timeline = executor.run(out.iteration.graph, sim);
  return out;
}

}  // namespace trainsim::exec
