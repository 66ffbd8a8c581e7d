#pragma once
// What a sweep found, and its files and tables (docs/sweep.md, "Output"): every
// point with the result keys as CSV and JSON, the ranking, the Pareto front of
// time-to-train against cost, and the plan (best layout per cluster option).
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sweep/evaluate.h"
#include "sweep/ranking.h"

namespace trainsim::sweep {

struct Outcome {
  std::uint64_t combinations = 0;
  std::vector<Point> points;          // the candidates, by id
  std::vector<PointResult> results;   // one per candidate
  std::map<std::string, std::uint64_t> pruned;    // reason -> count: cheap checks, reader, simulator
  std::map<std::string, std::string> examples;    // reason -> the message of its first point
  std::uint64_t evaluated = 0;
  std::uint64_t does_not_fit = 0;
  std::vector<std::size_t> ranking;  // indices into results
  std::vector<std::size_t> front;    // indices into results
  // Set when the run was stopped before it finished (docs/sweep.md, "Resuming"):
  // `points` and `results` then hold the points evaluated so far, and the
  // outputs say so.
  struct Partial {
    std::size_t points_done = 0;
    std::size_t points_total = 0;
    std::size_t replays_done = 0;
    std::size_t replays_total = 0;  // 0 when the stop came before the replays were chosen
    std::string stopped_by;         // "SIGINT", "SIGTERM"
  };
  std::optional<Partial> partial;
};

// One point of sweep.json's "points": the result file's keys it has, its layout and
// bottleneck (the Python package yields these one by one: python/, docs/python.md).
nlohmann::ordered_json point_json(const config::SweepSpec& spec, const Point& p, const PointResult& r);
// Whether a point is listed in the outputs: evaluated or too large, not rejected.
bool listed(const PointResult& r);

// Collects the results (in id order) with the enumeration's counts.
Outcome summarize(const config::SweepSpec& spec, Enumeration enumeration, std::vector<PointResult> results);

// Every evaluated and every too-large point, by id.
std::string points_csv(const config::SweepSpec& spec, const Outcome& o);
nlohmann::ordered_json sweep_json(const config::SweepSpec& spec, const Outcome& o);
// Counts, the best `show` points and the Pareto front, as text.
std::string sweep_table(const config::SweepSpec& spec, const Outcome& o, std::size_t show);

// Per cluster option: its best point by the objective (none when nothing fits).
struct PlanRow {
  std::size_t cluster = 0;
  std::optional<std::size_t> best;  // index into results
  std::uint64_t evaluated = 0;
  std::uint64_t does_not_fit = 0;
};
std::vector<PlanRow> plan(const config::SweepSpec& spec, const Outcome& o);
nlohmann::ordered_json plan_json(const config::SweepSpec& spec, const Outcome& o);
std::string plan_table(const config::SweepSpec& spec, const Outcome& o);

}  // namespace trainsim::sweep
