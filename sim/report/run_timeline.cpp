#include "report/run_timeline.h"

#include <fmt/format.h>
#include <ostream>

#include "io/timeline_format.h"
#include "report/gzip_stream.h"

namespace trainsim::report {

void write_run_timeline(const std::filesystem::path& path, const config::Scenario& s,
                        const exec::FullRunReport& full_run) {
  const auto& trials = full_run.monte_carlo.per_trial;
  io::timeline::Header header;
  header.scenario = s.name;
  header.num_gpus = s.cluster.num_gpus();
  header.gpus_per_node = s.cluster.gpus_per_node;
  header.full_run = fmt::format("{{\"trial\": 0, \"seed\": {}}}", s.failures->seed);
  write_atomically_gz(path, [&](std::ostream& os) {
    io::timeline::Writer w(os, header);
    // One lane, the job's states of trial 0 (rank -1: no GPU's).
    w.lane(-1, "job");
    if (!trials.empty())
      for (const faults::Event& e : trials.front().events) {
        io::timeline::Span span;
        span.rank = -1;
        span.stream = "job";
        span.category = e.category;
        span.name = e.name;
        span.start_ns = e.start;
        span.end_ns = e.end;
        w.span(span);
      }
    w.finish();
  });
}

}  // namespace trainsim::report
