#pragma once
// The timeline file (DESIGN.md, "Timeline file"; format "trainsim-timeline",
// version 1), its keys and its layout, in one place: the simulator's timeline
// and run timeline (report/timeline_writer.cpp, report/run_timeline.cpp) and
// the trainer's measured timeline (kernels/trainer/run_file.cpp) are written by
// TimelineWriter, and the GUI's reader (gui/model/timeline_reader.cpp) looks
// the same keys up. Streamed (a timeline can hold millions of spans); plain C++.
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace trainsim::io::timeline {

inline constexpr std::string_view kFormatName = "trainsim-timeline";
inline constexpr int kVersion = 1;

// Keys of the document: root > "lanes" > lane > "spans" > span, and root >
// "counters" > series > "points" > [time, value].
namespace key {
inline constexpr std::string_view kFormat = "format";
inline constexpr std::string_view kVersion = "version";
inline constexpr std::string_view kScenario = "scenario";
inline constexpr std::string_view kNumGpus = "num_gpus";
inline constexpr std::string_view kGpusPerNode = "gpus_per_node";
inline constexpr std::string_view kTimeUnit = "time_unit";
inline constexpr std::string_view kFullRun = "full_run";
inline constexpr std::string_view kNodeOfRank = "node_of_rank";
inline constexpr std::string_view kReplicas = "replicas";
inline constexpr std::string_view kRepresentative = "representative";  // in a replica
inline constexpr std::string_view kRanks = "ranks";                    // in a replica
inline constexpr std::string_view kLanes = "lanes";
inline constexpr std::string_view kRank = "rank";      // lane and span
inline constexpr std::string_view kStream = "stream";  // lane and span
inline constexpr std::string_view kSpans = "spans";
inline constexpr std::string_view kCategory = "category";
inline constexpr std::string_view kName = "name";  // span and counter series
inline constexpr std::string_view kStart = "start";
inline constexpr std::string_view kEnd = "end";
inline constexpr std::string_view kFlops = "flops";
inline constexpr std::string_view kBytes = "bytes";
inline constexpr std::string_view kIteration = "iteration";
inline constexpr std::string_view kMicrobatch = "microbatch";
inline constexpr std::string_view kLayer = "layer";
inline constexpr std::string_view kId = "id";      // optional, read by the GUI (critical path)
inline constexpr std::string_view kDeps = "deps";  // optional, read by the GUI (critical path)
inline constexpr std::string_view kCounters = "counters";
inline constexpr std::string_view kUnit = "unit";
inline constexpr std::string_view kPoints = "points";
}  // namespace key

// The document's head. Times are written in seconds ("time_unit": "s").
struct Header {
  std::string scenario;
  std::int64_t num_gpus = 0;
  std::int64_t gpus_per_node = 1;
  // The run timeline's {"trial": .., "seed": ..}, as JSON text; empty: none.
  std::string full_run;
  std::vector<std::int64_t> node_of_rank;
  // The simulated ranks and the ranks each one stands for ("0-7,16").
  std::vector<std::pair<std::int64_t, std::string>> replicas;
};

// One span. Times in nanoseconds from the timeline's start; the optional fields
// are written where present, in this order.
struct Span {
  std::int64_t rank = 0;
  std::string_view stream;
  std::string_view category;
  std::string_view name;
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  std::optional<double> flops;
  std::optional<double> bytes;
  std::optional<std::int64_t> iteration;
  std::optional<std::int64_t> microbatch;
  std::optional<std::int64_t> layer;
};

// Writes one timeline to `os`: the header, then lanes of spans, then counter
// series, then finish(). Lanes are written in the order given.
class Writer {
 public:
  Writer(std::ostream& os, const Header& header);
  void lane(std::int64_t rank, std::string_view stream);
  void span(const Span& s);
  // A counter series: (nanoseconds, value) points; `unit` "bytes" or "fraction".
  void counter(std::string_view name, std::string_view unit, const std::vector<std::pair<std::int64_t, double>>& points);
  void finish();

 private:
  void end_lane();
  std::ostream& os_;
  bool in_lane_ = false;
  bool first_lane_ = true;
  bool first_span_ = true;
  bool in_counters_ = false;
  bool first_counter_ = true;
};

}  // namespace trainsim::io::timeline
