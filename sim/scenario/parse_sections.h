#pragma once
// The parsers of each scenario section (internal to scenario/).
#include <optional>

#include <nlohmann/json.hpp>

#include "scenario/json_fields.h"
#include "scenario/presets.h"
#include "config/scenario.h"

namespace trainsim::scenario {

// "gpu": a preset name, an inline spec, or {"preset": NAME, ...overrides}.
// Also fills the platform defaults (gpus per node, intra/inter-node fabrics).
hw::ClusterSpec parse_cluster(const ObjectReader& root);
workload::ModelConfig parse_model(const ObjectReader& root);
workload::TrainingConfig parse_training(const ObjectReader& root, const hw::ClusterSpec& cluster,
                                        const workload::ModelConfig& model);
workload::ParallelConfig parse_parallelism(const ObjectReader& root, const hw::ClusterSpec& cluster,
                                           const workload::ModelConfig& model,
                                           const workload::TrainingConfig& training);
config::SimulationOptions parse_simulation(const ObjectReader& root);
// Also applies the section's power keys (gpu_idle_power, node_overhead_power,
// pue: their place before "cluster.pue") to `cluster`, so that every energy uses them.
std::optional<faults::FailureConfig> parse_failures(const ObjectReader& root, const workload::TrainingConfig& training,
                                                   hw::ClusterSpec& cluster);

// Resolves {"preset": NAME, ...} or "NAME" into the preset's JSON with the
// object's other keys laid over it (RFC 7396 merge patch).
nlohmann::json resolve_preset(const ObjectReader& parent, std::string_view key, PresetKind kind);

}  // namespace trainsim::scenario
