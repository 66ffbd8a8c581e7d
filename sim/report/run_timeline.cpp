#include "report/run_timeline.h"

#include <fmt/format.h>
#include <ostream>

#include "report/gzip_stream.h"
#include "report/json_text.h"

namespace trainsim::report {

namespace {
std::string seconds_text(core::Time t) { return fmt::format("{}.{:09d}", t / core::kSecond, t % core::kSecond); }
}  // namespace

void write_run_timeline(const std::filesystem::path& path, const config::Scenario& s,
                        const exec::FullRunReport& full_run) {
  const auto& trials = full_run.monte_carlo.per_trial;
  write_atomically_gz(path, [&](std::ostream& os) {
    os << "{\n\"format\": \"trainsim-timeline\",\n\"version\": 1,\n";
    os << "\"scenario\": " << json_string(s.name) << ",\n";
    os << "\"num_gpus\": " << s.cluster.num_gpus() << ",\n";
    os << "\"gpus_per_node\": " << s.cluster.gpus_per_node << ",\n\"time_unit\": \"s\",\n";
    os << "\"full_run\": {\"trial\": 0, \"seed\": " << s.failures->seed << "},\n";
    os << "\"node_of_rank\": [],\n\"replicas\": [],\n\"lanes\": [\n{\"rank\": -1, \"stream\": \"job\", \"spans\": [";
    if (!trials.empty()) {
      bool first = true;
      for (const faults::Event& e : trials.front().events) {
        os << (first ? "\n" : ",\n")
           << fmt::format("{{\"rank\": -1, \"stream\": \"job\", \"category\": {}, \"name\": {}, \"start\": {}, "
                          "\"end\": {}}}",
                          json_string(e.category), json_string(e.name), seconds_text(e.start), seconds_text(e.end));
        first = false;
      }
    }
    os << "]}\n],\n\"counters\": []\n}\n";
  });
}

}  // namespace trainsim::report
