#include "io/timeline_format.h"

#include "io/json_text.h"

namespace trainsim::io::timeline {

namespace {
// "key": as it is written, quoted.
std::string quoted(std::string_view k) { return "\"" + std::string(k) + "\": "; }
}  // namespace

Writer::Writer(std::ostream& os, const Header& h) : os_(os) {
  os_ << "{\n" << quoted(key::kFormat) << json_string(kFormatName) << ",\n" << quoted(key::kVersion) << kVersion << ",\n";
  os_ << quoted(key::kScenario) << json_string(h.scenario) << ",\n";
  os_ << quoted(key::kNumGpus) << h.num_gpus << ",\n";
  os_ << quoted(key::kGpusPerNode) << h.gpus_per_node << ",\n" << quoted(key::kTimeUnit) << "\"s\",\n";
  if (!h.full_run.empty()) os_ << quoted(key::kFullRun) << h.full_run << ",\n";
  os_ << quoted(key::kNodeOfRank) << "[";
  for (std::size_t r = 0; r < h.node_of_rank.size(); ++r) os_ << (r ? "," : "") << h.node_of_rank[r];
  os_ << "],\n" << quoted(key::kReplicas) << "[";
  for (std::size_t i = 0; i < h.replicas.size(); ++i)
    os_ << (i ? "," : "") << "{" << quoted(key::kRepresentative) << h.replicas[i].first << ", " << quoted(key::kRanks)
        << json_string(h.replicas[i].second) << "}";
  os_ << "],\n" << quoted(key::kLanes) << "[";
}

void Writer::end_lane() {
  if (in_lane_) os_ << "]}";
  in_lane_ = false;
}

void Writer::lane(std::int64_t rank, std::string_view stream) {
  end_lane();
  os_ << (first_lane_ ? "\n" : ",\n") << "{" << quoted(key::kRank) << rank << ", " << quoted(key::kStream)
      << json_string(stream) << ", " << quoted(key::kSpans) << "[";
  first_lane_ = false;
  first_span_ = true;
  in_lane_ = true;
}

void Writer::span(const Span& s) {
  std::string line = first_span_ ? "\n{" : ",\n{";
  first_span_ = false;
  line += quoted(key::kRank) + std::to_string(s.rank);
  line += ", " + quoted(key::kStream) + json_string(s.stream);
  line += ", " + quoted(key::kCategory) + json_string(s.category);
  line += ", " + quoted(key::kName) + json_string(s.name);
  line += ", " + quoted(key::kStart) + seconds_text(s.start_ns);
  line += ", " + quoted(key::kEnd) + seconds_text(s.end_ns);
  if (s.flops) line += ", " + quoted(key::kFlops) + json_number(*s.flops);
  if (s.bytes) line += ", " + quoted(key::kBytes) + json_number(*s.bytes);
  if (s.iteration) line += ", " + quoted(key::kIteration) + std::to_string(*s.iteration);
  if (s.microbatch) line += ", " + quoted(key::kMicrobatch) + std::to_string(*s.microbatch);
  if (s.layer) line += ", " + quoted(key::kLayer) + std::to_string(*s.layer);
  os_ << line << "}";
}

void Writer::counter(std::string_view name, std::string_view unit,
                     const std::vector<std::pair<std::int64_t, double>>& points) {
  if (!in_counters_) {
    end_lane();
    os_ << "\n],\n" << quoted(key::kCounters) << "[";
    in_counters_ = true;
  }
  os_ << (first_counter_ ? "\n" : ",\n") << "{" << quoted(key::kName) << json_string(name) << ", "
      << quoted(key::kUnit) << json_string(unit) << ", " << quoted(key::kPoints) << "[";
  first_counter_ = false;
  for (std::size_t i = 0; i < points.size(); ++i)
    os_ << (i ? "," : "") << "[" << seconds_text(points[i].first) << "," << json_number(points[i].second) << "]";
  os_ << "]}";
}

void Writer::finish() {
  if (in_counters_) {
    os_ << "\n]\n}\n";
    return;
  }
  end_lane();
  os_ << "\n],\n" << quoted(key::kCounters) << "[]\n}\n";
}

}  // namespace trainsim::io::timeline
