#pragma once
// The typed scenario: what a scenario file says, resolved and validated
// (DESIGN.md, "Scenario file"). Plain data; reading lives in scenario/reader.h.
#include <optional>
#include <string>

#include "hardware/cluster.h"
#include "network/algorithms.h"
#include "workload/model_config.h"
#include "workload/parallel_config.h"
#include "workload/training_config.h"

namespace trainsim::scenario {

enum class NetworkModel { kAnalytic, kFlow };

struct SimulationOptions {
  NetworkModel network_model = NetworkModel::kFlow;
  net::Algorithm collective_algorithm = net::Algorithm::kAuto;
  int iterations = 1;
  std::uint64_t seed = 1;
};

struct Scenario {
  std::string name;
  std::string source_file;  // where it was read from, for messages
  hw::ClusterSpec cluster;
  workload::ModelConfig model;
  workload::TrainingConfig training;
  workload::ParallelConfig parallel;
  SimulationOptions simulation;
};

}  // namespace trainsim::scenario
