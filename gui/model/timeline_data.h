#pragma once
// A timeline in memory (DESIGN.md, "Timeline file"): lanes of spans per (rank,
// stream), counter series beside them. Compact so a million spans fit easily:
// names are interned, times are seconds as doubles.
#include <cstdint>
#include <string>
#include <vector>

#include "model/categories.h"

namespace trainsim::gui {

struct Span {
  double start = 0.0;  // s
  double end = 0.0;    // s
  double flops = 0.0;
  double bytes = 0.0;
  std::uint32_t name = 0;        // index into TimelineData::names
  std::uint32_t deps_begin = 0;  // [deps_begin, deps_begin + deps_count) in TimelineData::deps
  std::uint32_t deps_count = 0;
  std::int32_t iteration = 0;
  std::int32_t microbatch = -1;
  std::int32_t layer = -1;
  std::int64_t id = -1;  // optional "id", the target of other spans' "deps"
  Category category = Category::kOther;
};

struct Lane {
  int rank = 0;
  int node = 0;
  std::string stream;
  std::vector<Span> spans;       // sorted by start
  std::vector<double> max_end;   // max_end[i] = max end of spans[0..i]: finds the first visible span
};

struct CounterSeries {
  std::string name;
  std::string unit;  // "fraction", "bytes", ...
  std::vector<std::pair<double, double>> points;  // (t, value), value holds until the next point
};

struct SpanRef {
  std::size_t lane = 0;
  std::size_t index = 0;
  friend bool operator==(const SpanRef&, const SpanRef&) = default;
  friend auto operator<=>(const SpanRef&, const SpanRef&) = default;
};

struct TimelineData {
  std::string scenario;
  int num_gpus = 0;
  int gpus_per_node = 1;
  std::vector<int> node_of_rank;
  std::vector<Lane> lanes;  // ordered by (rank, stream order)
  std::vector<CounterSeries> counters;
  std::vector<std::string> names;
  std::vector<std::int64_t> deps;  // span ids, see Span::deps_begin
  double t_begin = 0.0;
  double t_end = 0.0;

  std::size_t span_count() const;
  const Span& span(SpanRef r) const { return lanes[r.lane].spans[r.index]; }
  const std::string& name_of(const Span& s) const { return names[s.name]; }
  int node_of(int rank) const;
};

// Sorts each lane's spans by start, fills max_end, t_begin and t_end. Readers and
// synthetic builders (tests, benchmarks) call it once after filling the lanes.
void finalize(TimelineData& t);

// Index of the first span of the lane that may reach time t (its end >= t).
std::size_t first_reaching(const Lane& lane, double t);
// Index of the first span in [from, size) that starts at or after t.
std::size_t first_starting_at_or_after(const Lane& lane, std::size_t from, double t);

}  // namespace trainsim::gui
