#pragma once
// Failures in a sweep (docs/sweep.md, "Failures"): the best `replay_top_k`
// points of each cluster option by their failure-free objective are replayed
// with the full-run Monte Carlo of `trainsim run` (execution/full_run.h,
// docs/reliability.md), which gives them a time-to-train distribution, goodput,
// cost and energy under the spec's "failures" section.
#include <cstddef>
#include <functional>
#include <span>
#include <vector>

#include "sweep/evaluate.h"

namespace trainsim::sweep {

// Indices into `results` (ascending) of the points to replay: per cluster option,
// the first K of rank(results, objective) (failure-free objective, ties by id),
// K = spec.replay_top_k. Empty when the spec has no "failures" section.
std::vector<std::size_t> replay_selection(const config::SweepSpec& spec, std::span<const Point> points,
                                          std::span<const PointResult> results);

// Fills `reliability` (or `replay_error`) of the selected results: each point is
// simulated again and replayed on `threads` threads (the Monte Carlo result does
// not depend on the thread count). `progress(done)` after each point, and
// `finished(i)` with its index into `results`; once `stop()` returns true no
// further point is replayed.
void replay_points(const config::SweepSpec& spec, std::span<const Point> points, std::span<PointResult> results,
                   std::span<const std::size_t> selection, int threads,
                   const std::function<void(std::size_t)>& progress = {},
                   const std::function<void(std::size_t)>& finished = {}, const std::function<bool()>& stop = {});

// The nearest-rank quantile q of `v` (as the Monte Carlo's own percentiles,
// faults/replay.cpp): the smallest value with at least q of the values at or below it.
double nearest_rank(std::vector<double> v, double q);

}  // namespace trainsim::sweep
