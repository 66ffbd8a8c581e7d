#include "report/timeline_writer.h"

#include <algorithm>
#include <fmt/format.h>
#include <map>
#include <ostream>

#include "report/gzip_stream.h"
#include "io/timeline_format.h"
#include "report/json_text.h"

namespace trainsim::report {

namespace {

using workload::Task;

// Spans of each simulated rank, ordered by (stream, start, task).
std::map<int, std::vector<std::size_t>> spans_by_rank(const exec::SimulationOutput& out) {
  std::map<int, std::vector<std::size_t>> by_rank;
  const auto& graph = out.iteration.graph;
  for (std::size_t i = 0; i < out.timeline.spans.size(); ++i)
    by_rank[out.timeline.spans[i].rank].push_back(i);
  for (auto& [rank, idx] : by_rank) {
    std::sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) {
      const auto& sa = out.timeline.spans[a];
      const auto& sb = out.timeline.spans[b];
      const auto ka = std::make_tuple(graph[sa.task].stream, sa.start, sa.task);
      const auto kb = std::make_tuple(graph[sb.task].stream, sb.start, sb.task);
      return ka < kb;
    });
  }
  return by_rank;
}

double work_bytes(const workload::Work& w) { return w.collective ? w.collective->bytes : w.compute.bytes; }

// Seconds with nanosecond resolution, as exact decimal text.
// Microseconds (the Chrome trace unit) with nanosecond resolution.
std::string micros_text(core::Time t) { return fmt::format("{}.{:03d}", t / 1000, t % 1000); }

// The job's tracks: tid 0 the sequence of states (each span follows the last),
// tid 1 degraded-link episodes, tid 2 background checkpoint writes.
constexpr int kJobTrack = 0;
constexpr int kDegradedTrack = 1;
constexpr int kStorageTrack = 2;

// A failure event of the run timeline is the failure's detection.
std::string_view trace_category(const faults::Event& e) {
  if (e.category == "failure") return "detection";
  return e.category;
}

template <typename Emit>
void job_events(const config::Scenario& s, const faults::TrialResult& trial, Emit& emit) {
  const long long pid = s.cluster.num_gpus() + 1;
  emit(fmt::format("{{\"ph\": \"M\", \"pid\": {}, \"name\": \"process_name\", \"args\": {{\"name\": \"job "
                   "(full run, trial 0, seed {})\"}}}}",
                   pid, s.failures->seed));
  emit(fmt::format("{{\"ph\": \"M\", \"pid\": {}, \"name\": \"process_sort_index\", \"args\": "
                   "{{\"sort_index\": {}}}}}",
                   pid, pid));
  const std::pair<int, const char*> tracks[] = {
      {kJobTrack, "job"}, {kDegradedTrack, "degraded link"}, {kStorageTrack, "checkpoint storage"}};
  for (const auto& [tid, name] : tracks)
    emit(fmt::format("{{\"ph\": \"M\", \"pid\": {}, \"tid\": {}, \"name\": \"thread_name\", \"args\": "
                     "{{\"name\": \"{}\"}}}}",
                     pid, tid, name));
  const auto span = [&](int tid, std::string_view category, const std::string& name, core::Time start,
                        core::Time end) {
    emit(fmt::format("{{\"ph\": \"X\", \"pid\": {}, \"tid\": {}, \"ts\": {}, \"dur\": {}, \"name\": {}, "
                     "\"cat\": \"{}\"}}",
                     pid, tid, micros_text(start), micros_text(end - start), json_string(name), category));
  };
  for (const faults::Event& e : trial.events) {
    const int tid = !e.concurrent ? kJobTrack : e.category == "degraded" ? kDegradedTrack : kStorageTrack;
    if (e.phases.empty()) {
      span(tid, trace_category(e), e.name, e.start, e.end);
      continue;
    }
    for (const faults::Phase& p : e.phases) span(tid, p.category, p.name, p.start, p.end);
  }
  for (const faults::FailureMark& f : trial.failures)
    emit(fmt::format("{{\"ph\": \"i\", \"s\": \"t\", \"pid\": {}, \"tid\": {}, \"ts\": {}, \"name\": \"{} "
                     "failure\", \"cat\": \"failure\"}}",
                     pid, kJobTrack, micros_text(f.at), faults::to_string(f.component)));
}

}  // namespace

void write_timeline(const std::filesystem::path& path, const config::Scenario& s, const exec::SimulationOutput& out) {
  const auto by_rank = spans_by_rank(out);
  const auto& graph = out.iteration.graph;
  io::timeline::Header header;
  header.scenario = s.name;
  header.num_gpus = s.cluster.num_gpus();
  header.gpus_per_node = s.cluster.gpus_per_node;
  for (long long r = 0; r < s.cluster.num_gpus(); ++r) header.node_of_rank.push_back(r / s.cluster.gpus_per_node);
  std::map<int, std::vector<long long>> replicas;
  for (std::size_t r = 0; r < out.iteration.representative.size(); ++r)
    replicas[out.iteration.representative[r]].push_back(static_cast<long long>(r));
  for (const auto& [rep, ranks] : replicas) header.replicas.emplace_back(rep, rank_ranges(ranks));
  write_atomically_gz(path, [&](std::ostream& os) {
    io::timeline::Writer w(os, header);
    for (const auto& [rank, idx] : by_rank) {
      std::size_t i = 0;
      while (i < idx.size()) {
        const workload::Stream stream = graph[out.timeline.spans[idx[i]].task].stream;
        w.lane(rank, workload::to_string(stream));
        for (; i < idx.size() && graph[out.timeline.spans[idx[i]].task].stream == stream; ++i) {
          const exec::Span& sp = out.timeline.spans[idx[i]];
          const Task& t = graph[sp.task];
          const workload::Work& work = graph.work(t);
          w.span({rank, workload::to_string(stream), workload::to_string(t.category), work.name, sp.start, sp.end,
                  work.collective ? 0.0 : work.compute.flops, work_bytes(work), t.iteration, t.microbatch,
                  t.layer});
        }
      }
    }
    // Memory of the peak stage's rank first (bytes), then the links (fraction).
    if (!out.memory_over_time.series.points.empty())
      w.counter(out.memory_over_time.series.name, "bytes", out.memory_over_time.series.points);
    for (const exec::CounterSeries& series : out.network.counters) w.counter(series.name, "fraction", series.points);
    w.finish();
  });
}

void write_trace(const std::filesystem::path& path, const config::Scenario& s, const exec::SimulationOutput& out,
                 const std::vector<long long>& ranks, const exec::FullRunReport* full_run) {
  const auto by_rank = spans_by_rank(out);
  const auto& graph = out.iteration.graph;
  write_atomically_gz(path, [&](std::ostream& os) {
    os << "{\"displayTimeUnit\": \"ns\", \"otherData\": {\"scenario\": " << json_string(s.name)
       << ", \"generator\": \"trainsim\"},\n\"traceEvents\": [\n";
    bool first = true;
    auto emit = [&](const std::string& event) {
      os << (first ? "" : ",\n") << event;
      first = false;
    };
    for (const long long rank : ranks) {
      const int rep = out.iteration.representative[static_cast<std::size_t>(rank)];
      const long long node = rank / s.cluster.gpus_per_node;
      emit(fmt::format("{{\"ph\": \"M\", \"pid\": {}, \"name\": \"process_name\", \"args\": {{\"name\": \"GPU {} "
                       "(node {})\"}}}}",
                       rank, rank, node));
      emit(fmt::format("{{\"ph\": \"M\", \"pid\": {}, \"name\": \"process_sort_index\", \"args\": "
                       "{{\"sort_index\": {}}}}}",
                       rank, rank));
      const auto it = by_rank.find(rep);
      if (it == by_rank.end()) continue;
      std::vector<bool> named(workload::kNumStreams, false);
      for (const std::size_t i : it->second) {
        const exec::Span& sp = out.timeline.spans[i];
        const Task& t = graph[sp.task];
        const workload::Work& work = graph.work(t);
        const auto tid = static_cast<int>(t.stream);
        if (!named[static_cast<std::size_t>(tid)]) {
          emit(fmt::format("{{\"ph\": \"M\", \"pid\": {}, \"tid\": {}, \"name\": \"thread_name\", \"args\": "
                           "{{\"name\": \"{}\"}}}}",
                           rank, tid, workload::to_string(t.stream)));
          named[static_cast<std::size_t>(tid)] = true;
        }
        std::string args = fmt::format("\"iteration\": {}, \"bytes\": {}", t.iteration, work_bytes(work));
        if (!work.collective) args += fmt::format(", \"flops\": {}", work.compute.flops);
        if (t.microbatch >= 0) args += fmt::format(", \"microbatch\": {}", t.microbatch);
        if (t.layer >= 0) args += fmt::format(", \"layer\": {}", t.layer);
        if (rep != rank) args += fmt::format(", \"replica_of\": {}", rep);
        emit(fmt::format("{{\"ph\": \"X\", \"pid\": {}, \"tid\": {}, \"ts\": {}, \"dur\": {}, \"name\": {}, "
                         "\"cat\": \"{}\", \"args\": {{{}}}}}",
                         rank, tid, micros_text(sp.start), micros_text(sp.end - sp.start), json_string(work.name),
                         workload::to_string(t.category), args));
      }
    }
    // Memory in use as a counter track of the rank it belongs to.
    if (std::find(ranks.begin(), ranks.end(), out.memory_over_time.rank) != ranks.end())
      for (const auto& [time, value] : out.memory_over_time.series.points)
        emit(fmt::format("{{\"ph\": \"C\", \"pid\": {}, \"ts\": {}, \"name\": \"memory\", \"args\": "
                         "{{\"bytes\": {}}}}}",
                         out.memory_over_time.rank, micros_text(time), value));
    // Link utilization as counter tracks, in a process of their own.
    if (!out.network.counters.empty()) {
      const long long pid = s.cluster.num_gpus();
      emit(fmt::format("{{\"ph\": \"M\", \"pid\": {}, \"name\": \"process_name\", \"args\": {{\"name\": "
                       "\"network links\"}}}}",
                       pid));
      for (const exec::CounterSeries& series : out.network.counters)
        for (const auto& [time, value] : series.points)
          emit(fmt::format("{{\"ph\": \"C\", \"pid\": {}, \"ts\": {}, \"name\": {}, \"args\": {{\"utilization\": "
                           "{}}}}}",
                           pid, micros_text(time), json_string(series.name), value));
    }
    if (full_run && s.failures && !full_run->monte_carlo.per_trial.empty())
      job_events(s, full_run->monte_carlo.per_trial.front(), emit);
    os << "\n]}\n";
  });
}

}  // namespace trainsim::report
