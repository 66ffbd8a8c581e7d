#include "model/timeline_reader.h"

#include "model/json_sax_parser.h"
#include "io/timeline_format.h"
#include "scenario/errors.h"
#include "scenario/gzip_file.h"

#include <array>
#include <fstream>
#include <string>
#include <unordered_map>

namespace trainsim::gui {

namespace {

namespace key = io::timeline::key;

// The SAX events of the timeline, dispatched on the nesting depth and the keys
// that lead there: root (1) > "lanes" (2) > lane (3) > "spans" (4) > span (5) >
// "deps" (6); root > "counters" (2) > series (3) > "points" (4) > point (5).
class TimelineSax {
 public:
  using string_t = std::string;

  explicit TimelineSax(TimelineData& out) : out_(out) {}

  bool null() { return true; }
  bool boolean(bool) { return true; }
  bool number_float(double v, const string_t&) { return number(v); }

  bool string(string_t& v) {
    if (depth_ == 1) {
      if (key(1) == key::kScenario) out_.scenario = v;
      else if (key(1) == key::kFormat) format_ = v;
      else if (key(1) == key::kTimeUnit) unit_ = v;
    } else if (in_lanes() && depth_ == 3) {
      if (key(3) == key::kStream) lane_.stream = v;
    } else if (in_lanes() && depth_ == 5) {
      if (key(5) == key::kCategory) span_.category = category_from_name(v);
      else if (key(5) == key::kName) span_.name = intern(v);
      else if (key(5) == key::kStream && lane_.stream.empty()) lane_.stream = v;
    } else if (in_counters() && depth_ == 3) {
      if (key(3) == key::kName) counter_.name = v;
      else if (key(3) == key::kUnit) counter_.unit = v;
    }
    return true;
  }

  bool start_object(std::size_t) {
    push();
    if (in_lanes() && depth_ == 3) lane_ = Lane{};
    if (in_lanes() && depth_ == 5) {
      span_ = Span{};
      span_.deps_begin = static_cast<std::uint32_t>(out_.deps.size());
    }
    if (in_counters() && depth_ == 3) counter_ = CounterSeries{};
    return true;
  }
  bool end_object() {
    if (in_lanes() && depth_ == 5) {
      span_.deps_count = static_cast<std::uint32_t>(out_.deps.size() - span_.deps_begin);
      lane_.spans.push_back(span_);
    } else if (in_lanes() && depth_ == 3) {
      out_.lanes.push_back(std::move(lane_));
    } else if (in_counters() && depth_ == 3) {
      out_.counters.push_back(std::move(counter_));
    }
    --depth_;
    return true;
  }
  bool start_array(std::size_t) {
    push();
    if (in_counters() && depth_ == 5) point_count_ = 0;
    return true;
  }
  bool end_array() {
    --depth_;
    return true;
  }
  bool key(string_t& k) {
    keys_[static_cast<std::size_t>(depth_)] = k;
    return true;
  }
  const std::string& format() const { return format_; }
  const std::string& unit() const { return unit_; }

 private:
  static constexpr int kMaxDepth = 16;

  const std::string& key(int d) const { return keys_[static_cast<std::size_t>(d)]; }
  bool in_lanes() const { return depth_ >= 2 && key(1) == key::kLanes; }
  bool in_counters() const { return depth_ >= 2 && key(1) == key::kCounters; }
  void push() {
    ++depth_;
    if (depth_ < kMaxDepth) keys_[static_cast<std::size_t>(depth_)].clear();
  }

  bool number(double v) {
    if (depth_ >= kMaxDepth) return true;
    if (depth_ == 1) {
      if (key(1) == key::kNumGpus) out_.num_gpus = static_cast<int>(v);
      else if (key(1) == key::kGpusPerNode) out_.gpus_per_node = static_cast<int>(v);
    } else if (depth_ == 2 && key(1) == key::kNodeOfRank) {
      out_.node_of_rank.push_back(static_cast<int>(v));
    } else if (in_lanes() && depth_ == 3) {
      if (key(3) == key::kRank) lane_.rank = static_cast<int>(v);
    } else if (in_lanes() && depth_ == 5) {
      span_number(key(5), v);
    } else if (in_lanes() && depth_ == 6 && key(5) == key::kDeps) {
      out_.deps.push_back(static_cast<std::int64_t>(v));
    } else if (in_counters() && depth_ == 5 && key(3) == key::kPoints) {
      if (point_count_ == 0) counter_.points.emplace_back(v, 0.0);
      else if (point_count_ == 1 && !counter_.points.empty()) counter_.points.back().second = v;
      ++point_count_;
    }
    return true;
  }

  void span_number(const std::string& k, double v) {
    if (k == key::kStart) span_.start = v;
    else if (k == key::kEnd) span_.end = v;
    else if (k == key::kFlops) span_.flops = v;
    else if (k == key::kBytes) span_.bytes = v;
    else if (k == key::kIteration) span_.iteration = static_cast<std::int32_t>(v);
    else if (k == key::kMicrobatch) span_.microbatch = static_cast<std::int32_t>(v);
    else if (k == key::kLayer) span_.layer = static_cast<std::int32_t>(v);
    else if (k == key::kId) span_.id = static_cast<std::int64_t>(v);
    else if (k == key::kRank && lane_.spans.empty()) lane_.rank = static_cast<int>(v);
  }

  std::uint32_t intern(const std::string& name) {
    auto [it, added] = name_ids_.try_emplace(name, static_cast<std::uint32_t>(out_.names.size()));
    if (added) out_.names.push_back(name);
    return it->second;
  }

  TimelineData& out_;
  int depth_ = 0;
  std::array<std::string, kMaxDepth> keys_{};
  Lane lane_;
  Span span_;
  CounterSeries counter_;
  int point_count_ = 0;
  std::unordered_map<std::string, std::uint32_t> name_ids_;
  std::string format_;
  std::string unit_ = "s";
};

double seconds_per_unit(std::string_view unit) {
  if (unit == "s") return 1.0;
  if (unit == "ms") return 1e-3;
  if (unit == "us") return 1e-6;
  if (unit == "ns") return 1e-9;
  return 0.0;
}

}  // namespace

std::string read_text_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) throw ReadError(path.string() + ": cannot open the file");
  const auto size = static_cast<std::size_t>(in.tellg());
  if (size >= 2) {
    char head[2] = {};
    in.seekg(0);
    in.read(head, 2);
    if (scenario::has_gzip_magic(std::string_view(head, 2))) {
      try {
        return scenario::read_gzip_file(path);
      } catch (const scenario::ScenarioError& e) {
        throw ReadError(e.what());
      }
    }
  }
  std::string text(size, '\0');
  in.seekg(0);
  if (!in.read(text.data(), static_cast<std::streamsize>(text.size())))
    throw ReadError(path.string() + ": cannot read the file");
  return text;
}

TimelineData parse_timeline_text(std::string_view text, std::string_view source) {
  TimelineData t;
  TimelineSax sax(t);
  JsonSaxParser<TimelineSax> parser(text, sax);
  const std::string where(source);
  if (!parser.parse()) throw ReadError(where + ": invalid JSON: " + parser.error());
  if (sax.format() != io::timeline::kFormatName)
    throw ReadError(where + ": /format: expected \"" + std::string(io::timeline::kFormatName) + "\", found \"" +
                    sax.format() + "\"");
  const double scale = seconds_per_unit(sax.unit());
  if (scale == 0.0)
    throw ReadError(where + ": /time_unit: expected \"s\", \"ms\", \"us\" or \"ns\", found \"" + sax.unit() + "\"");
  if (scale != 1.0) {
    for (Lane& l : t.lanes)
      for (Span& s : l.spans) {
        s.start *= scale;
        s.end *= scale;
      }
    for (CounterSeries& c : t.counters)
      for (auto& p : c.points) p.first *= scale;
  }
  finalize(t);
  return t;
}

TimelineData read_timeline_file(const std::filesystem::path& path) {
  const std::string text = read_text_file(path);
  return parse_timeline_text(text, path.string());
}

}  // namespace trainsim::gui
