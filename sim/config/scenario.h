#pragma once
// The typed scenario: what a scenario file says, resolved and validated
// (DESIGN.md, "Scenario file"). Plain data, below execution, so the simulation
// modules take a scenario without the reader (sim/scenario/reader.h).
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "faults/failure_config.h"
#include "hardware/calibration_profile.h"
#include "hardware/cluster.h"
#include "network/algorithms.h"
#include "workload/model_config.h"
#include "workload/parallel_config.h"
#include "workload/training_config.h"

namespace trainsim::config {

enum class NetworkModel { kAnalytic, kFlow };

struct SimulationOptions {
  NetworkModel network_model = NetworkModel::kFlow;
  net::Algorithm collective_algorithm = net::Algorithm::kAuto;
  int iterations = 1;
  std::uint64_t seed = 1;
};

// The calibration profile a run takes kernel costs from (scenario key
// "calibration", or trainsim run --calibration).
struct CalibrationSource {
  std::string file;  // the path it was read from
  std::shared_ptr<const hw::CalibrationProfile> profile;  // shared: scenarios are copied, profiles are large
  std::vector<std::string> warnings;                      // e.g. an incomplete profile
};

struct Scenario {
  std::string name;
  std::string source_file;  // where it was read from, for messages
  hw::ClusterSpec cluster;
  workload::ModelConfig model;
  workload::TrainingConfig training;
  workload::ParallelConfig parallel;
  SimulationOptions simulation;
  std::optional<CalibrationSource> calibration;  // none: the GPU spec's roofline prices every kernel
  std::optional<faults::FailureConfig> failures;  // none: no full-run replay (docs/reliability.md)
};

}  // namespace trainsim::config
