#pragma once
// The points of a sweep's space (docs/sweep.md, "Space"): every combination of
// the space's values on every cluster option, in a fixed order, with the ones
// that cannot be valid pruned by cheap divisibility checks and counted per reason.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/sweep_spec.h"

namespace trainsim::sweep {

// One layout on one cluster option. -1 in a choice: the key is not given.
struct Point {
  std::uint64_t id = 0;  // index of the combination in enumeration order: the stable key
  int cluster = 0;
  config::NetworkModel network_model = config::NetworkModel::kAnalytic;
  int tensor = 1, pipeline = 1, context = 1, expert = 1, data = 1;
  int virtual_stage = 0;  // num_layers_per_virtual_pipeline_stage; 0: none
  long long micro_batch = 1;
  int sequence_parallel = -1, zero_stage = -1, recompute = -1, schedule = -1;
  int overlap_grad_reduce = -1, overlap_param_gather = -1;
};

// The resolved values of each key for one cluster option ("auto" expanded).
struct ResolvedSpace {
  std::vector<long long> tensor, pipeline, context, expert, micro_batch, virtual_stage;
  std::optional<std::vector<long long>> data;  // none: derived, GPUs / (tp x pp x cp)
};
ResolvedSpace resolve(const config::Space& space, const config::Scenario& base);

// Reasons of the cheap pruning, in the order they are checked (docs/sweep.md).
inline constexpr const char* kPruneGpus = "tp x pp x cp does not divide the GPUs";
inline constexpr const char* kPruneData = "data_parallel_size is not in the space";
inline constexpr const char* kPruneHeads = "tp does not divide the attention heads or query groups";
inline constexpr const char* kPruneLayers = "pp does not divide num_layers";
inline constexpr const char* kPruneBatch = "micro_batch_size x dp does not divide global_batch_size";
inline constexpr const char* kPruneRedundantZero = "redundant: zero_stage > 0 with dp 1 is zero_stage 0";
inline constexpr const char* kPruneRedundantSp = "redundant: sequence_parallel with tp 1 is no sequence_parallel";

struct Enumeration {
  std::uint64_t combinations = 0;              // every combination of the space, on every cluster
  std::vector<Point> candidates;               // those that passed, by id
  std::map<std::string, std::uint64_t> pruned;  // reason -> count
};

// Throws std::length_error when the space has more than `max_combinations`.
Enumeration enumerate(const config::SweepSpec& spec, std::uint64_t max_combinations = 100'000'000);

// The point's layout, the keys it does not give at the scenario reader's defaults
// (not yet checked: scenario::check_parallelism). kRecomputeNames and
// kScheduleNames list workload::Recompute and workload::PipelineSchedule in order.
workload::ParallelConfig parallel_config(const Point& p);
// "tp2 pp4 vpp3 dp8 mbs1 sp zero1 full 1f1b analytic" (keys not given are left out).
std::string layout_label(const Point& p);

}  // namespace trainsim::sweep
