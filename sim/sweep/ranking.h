#pragma once
// Ranking, Pareto front and bottleneck of evaluated points (docs/sweep.md).
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "config/sweep_spec.h"
#include "sweep/evaluate.h"
#include "sweep/space.h"

namespace trainsim::sweep {

// The value a point of cluster option `c` is ranked on: its time to train, or its
// cost, the owned cost where `c` has "ownership", else the cloud's
// (PlanEconomics::cost()); failure-free, or, when it was replayed under failures,
// the replay's p50 (docs/sweep.md, "Objective").
std::optional<double> objective_of(const PointResult& r, const config::ClusterOption& c,
                                   config::Objective objective);

// Indices of the evaluated results with a value for the spec's objective, best
// first (least time-to-train or cost), ties broken by id; results[i] is points[i]'s.
// Points replayed under failures come first, by their p50; the others follow by
// their failure-free value.
std::vector<std::size_t> rank(std::span<const PointResult> results, std::span<const Point> points,
                              const config::SweepSpec& spec);

// A point to put on the front: time and cost, both to be minimized.
struct TimeCost {
  double time = 0;
  double cost = 0;
  std::uint64_t id = 0;
};
// Indices of the points no other point dominates (time <= and cost <=, one of
// them strictly), by time; points equal in both stay together.
std::vector<std::size_t> pareto_front(std::span<const TimeCost> points);
// The front of the evaluated results with a time-to-train and a cost; indices into `results`.
std::vector<std::size_t> pareto_front(std::span<const PointResult> results);

// The largest share of an iteration of an evaluated point: "compute" (forward,
// backward, optimizer), "memory" (recomputation, paid only to fit in memory),
// "tp_communication", "dp_communication" (exposed), or "bubble" (pipeline bubble,
// exposed pipeline transfers and other idle time).
struct Bottleneck {
  std::string name;
  double seconds = 0;  // per iteration
  double share = 0;    // of the iteration time
};
Bottleneck bottleneck(const PointResult& r);

}  // namespace trainsim::sweep
