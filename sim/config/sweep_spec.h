#pragma once
// A strategy-sweep spec (docs/sweep.md): a model, its training budget, cluster
// options to compare and the space of parallel layouts to search on each. Plain
// data, like the scenario (config/scenario.h): the reader fills it
// (scenario/sweep_spec_reader.h), the sweep enumerates and ranks from it.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/scenario.h"

namespace trainsim::config {

enum class Objective { kTimeToTrain, kCost };

inline std::string_view to_string(Objective o) { return o == Objective::kCost ? "cost" : "time_to_train"; }

// One cluster to compare: a scenario without its layout (scenario/reader.h,
// parse_scenario_base), read once.
struct ClusterOption {
  std::string name;
  Scenario base;
};

// The values one key of "space" takes. Sizes are integers; a missing key leaves
// the scenario reader's default (not passed); "auto" is resolved per cluster.
struct IntAxis {
  bool automatic = false;
  std::vector<long long> values;  // when not automatic
};

// Choices of the space's non-size keys; -1 in a point: key not given.
inline constexpr const char* kRecomputeNames[] = {"none", "selective", "full", "selective_op"};
inline constexpr const char* kScheduleNames[] = {"gpipe", "1f1b", "interleaved_1f1b"};

struct Space {
  IntAxis tensor, pipeline, data, context, expert, micro_batch;
  // num_layers_per_virtual_pipeline_stage: 0 stands for null (no virtual stages).
  IntAxis virtual_stage;
  std::vector<int> sequence_parallel{-1};  // -1 (not given), 0, 1
  std::vector<int> zero_stage{-1};         // -1 or 0..3
  std::vector<int> recompute{-1};          // -1 or an index into kRecomputeNames
  std::vector<int> schedule{-1};           // -1 or an index into kScheduleNames
  std::vector<NetworkModel> network_model{NetworkModel::kAnalytic};
  std::vector<int> overlap_grad_reduce{-1};
  std::vector<int> overlap_param_gather{-1};
};

struct SweepSpec {
  std::string name;
  std::string file;
  std::vector<ClusterOption> clusters;
  Space space;
  Objective objective = Objective::kTimeToTrain;
  // With a "failures" section: points per cluster option replayed under failures
  // (the best by the failure-free objective; docs/sweep.md, "Failures").
  int replay_top_k = kDefaultReplayTopK;
  static constexpr int kDefaultReplayTopK = 3;
  // Points with many micro-batches per replica timed from three short runs in
  // the steady state (sweep/microbatch_extrapolation.h; docs/sweep.md, "Speed").
  bool extrapolate_microbatches = true;
  // The power a site can feed, facility side (W): the plan says how many of each
  // cluster option it holds at full load (docs/sweep.md, "Owned clusters").
  std::optional<double> site_power;
  // Power and cooling of one rack position, IT side (W): the plan says how many racks
  // each option takes (sweep::rack_fit).
  std::optional<double> rack_power;

  // True when the spec has a "failures" section (shared by every cluster option).
  [[nodiscard]] bool failures_modeled() const { return !clusters.empty() && clusters.front().base.failures; }
};

}  // namespace trainsim::config
