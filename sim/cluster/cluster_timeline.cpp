#include "cluster/cluster_timeline.h"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "core/time.h"
#include "io/timeline_format.h"

namespace trainsim::cluster {

namespace {

struct GpuSpan {
  std::int64_t start = 0, end = 0;
  std::string_view category;
  std::size_t job = 0;
};

// Each segment's spans on the GPUs it held: the lowest of each node free at its start.
std::vector<std::vector<GpuSpan>> spans_by_gpu(const config::ClusterWorkload& w, const ScheduleResult& r) {
  const int per_node = w.cluster.gpus_per_node;
  std::vector<std::tuple<double, std::size_t, const Segment*>> order;  // (start, job, segment)
  for (std::size_t j = 0; j < r.jobs.size(); ++j)
    for (const Segment& s : r.jobs[j].segments) order.emplace_back(s.start_s, j, &s);
  std::stable_sort(order.begin(), order.end(),
                   [](const auto& a, const auto& b) { return std::get<0>(a) < std::get<0>(b); });
  std::vector<std::vector<GpuSpan>> lanes(static_cast<std::size_t>(w.cluster.num_gpus()));
  std::vector<std::int64_t> busy_until(lanes.size(), 0);
  for (const auto& [start_s, j, s] : order) {
    const std::int64_t start = core::from_seconds(s->start_s);
    const std::int64_t work = core::from_seconds(s->start_s + s->restart_s);
    const std::int64_t end = core::from_seconds(s->end_s);
    const std::int64_t checkpoint = std::max(work, end - core::from_seconds(s->checkpoint_s));
    for (int node : s->placement.nodes) {
      int taken = 0;
      for (int g = 0; g < per_node && taken < s->placement.gpus_per_node; ++g) {
        const auto gpu = static_cast<std::size_t>(node * per_node + g);
        if (busy_until[gpu] > start) continue;
        busy_until[gpu] = end;
        ++taken;
        if (work > start) lanes[gpu].push_back({start, work, "restart", j});
        if (checkpoint > work) lanes[gpu].push_back({work, checkpoint, "train", j});
        if (end > checkpoint) lanes[gpu].push_back({checkpoint, end, "checkpoint", j});
      }
      if (taken < s->placement.gpus_per_node)
        throw std::logic_error("write_cluster_timeline: a node holds more GPUs than it has");
    }
  }
  return lanes;
}

}  // namespace

void write_cluster_timeline(std::ostream& os, const config::ClusterWorkload& w, const ScheduleResult& r) {
  io::timeline::Header header;
  header.scenario = w.name;
  header.num_gpus = w.cluster.num_gpus();
  header.gpus_per_node = w.cluster.gpus_per_node;
  for (std::int64_t g = 0; g < header.num_gpus; ++g) header.node_of_rank.push_back(g / w.cluster.gpus_per_node);
  const std::vector<std::vector<GpuSpan>> lanes = spans_by_gpu(w, r);
  io::timeline::Writer writer(os, header);
  for (std::size_t g = 0; g < lanes.size(); ++g) {
    writer.lane(static_cast<std::int64_t>(g), "job");
    for (const GpuSpan& s : lanes[g]) {
      io::timeline::Span span;
      span.rank = static_cast<std::int64_t>(g);
      span.stream = "job";
      span.category = s.category;
      span.name = w.jobs[s.job].name;
      span.start_ns = s.start;
      span.end_ns = s.end;
      writer.span(span);
    }
  }
  std::vector<std::pair<std::int64_t, double>> utilization;
  for (const UsagePoint& u : r.usage)
    utilization.emplace_back(core::from_seconds(u.time_s),
                             static_cast<double>(u.busy_gpus) / static_cast<double>(header.num_gpus));
  writer.counter("GPUs busy", "fraction", utilization);
  writer.finish();
}

}  // namespace trainsim::cluster
