#include "execution/memory_timeline.h"

#include <algorithm>
#include <map>
#include <stdexcept>
#include <tuple>
#include <vector>

namespace trainsim::exec {

namespace {

struct Change {
  core::Time time = 0;
  double bytes = 0.0;       // + allocated, - freed
  workload::TaskId task = 0;
};

// A pass of one layer of one micro-batch: (iteration, micro-batch, layer).
using PassKey = std::tuple<int, int, long long>;

struct Window {
  core::Time first_start = 0;
  core::Time last_end = 0;
  workload::TaskId first = 0;
  workload::TaskId last = 0;
  bool seen = false;
  void add(const Span& span) {
    if (!seen || span.start < first_start) {
      first_start = span.start;
      first = span.task;
    }
    if (!seen || span.end >= last_end) {
      last_end = span.end;
      last = span.task;
    }
    seen = true;
  }
};

}  // namespace

MemoryTimeline track_memory(const scenario::Scenario& s, const SimulationOutput& out, int rank) {
  const auto& ranks = out.iteration.simulated_ranks;
  const auto at = std::find(ranks.begin(), ranks.end(), rank);
  if (at == ranks.end()) throw std::invalid_argument("track_memory: rank is not simulated");
  const int stage = static_cast<int>(at - ranks.begin());
  const std::vector<workload::MemoryEstimate> stages = workload::memory_per_stage(s.model, s.training, s.parallel);
  const workload::MemoryEstimate& est = stages.at(static_cast<std::size_t>(stage));
  const double states = est.weights + est.gradients + est.optimizer_states;

  const workload::ActivationSplit split{s.parallel.tensor, s.parallel.sequence_parallel, s.parallel.context};
  const long long b = s.training.micro_batch_size;
  const double layer = workload::layer_activation_bytes(s.model, s.training, s.parallel.recompute, b, split);
  const double recomputed =
      s.parallel.recompute == workload::Recompute::kFull
          ? workload::layer_activation_bytes(s.model, s.training, workload::Recompute::kNone, b, split)
          : 0.0;
  const double embedding = workload::embedding_activation_bytes(s.model, s.training, b, split);
  const double head = workload::head_activation_bytes(s.model, s.training, b, split);

  std::map<PassKey, Window> forward;
  std::map<PassKey, Window> backward;
  std::map<PassKey, Window> recompute;
  std::vector<Change> changes;
  for (const Span& span : out.timeline.spans) {
    const workload::Task& t = out.iteration.graph[span.task];
    if (t.rank != rank) continue;
    if (t.collective) {
      // Data-parallel reductions work in place on the gradient buffer and ZeRO's
      // gathers land in the weights counted above; other transfers need a buffer
      // for what they receive while they run.
      if (t.stream == workload::Stream::kDpComm || t.collective->kind == net::CollectiveKind::kAllReduce) continue;
      changes.push_back({span.start, t.collective->bytes, span.task});
      changes.push_back({span.end, -t.collective->bytes, span.task});
      continue;
    }
    const PassKey key{t.iteration, t.microbatch, t.layer};
    if (t.layer >= 0) {
      if (t.category == workload::Category::kForward) forward[key].add(span);
      if (t.category == workload::Category::kBackward) backward[key].add(span);
      if (t.category == workload::Category::kRecompute) recompute[key].add(span);
      continue;
    }
    // Outside the layers: the embedding's pass, and the head's (final norm to loss).
    if (t.name == "embedding" || t.name == "final_norm") forward[{t.iteration, t.microbatch, t.name == "embedding" ? -1 : -2}].add(span);
    if (t.name == "embedding.backward" || t.name == "final_norm.backward")
      backward[{t.iteration, t.microbatch, t.name == "embedding.backward" ? -1 : -2}].add(span);
  }
  for (const auto& [key, fwd] : forward) {
    const long long l = std::get<2>(key);
    const double bytes = l == -1 ? embedding : l == -2 ? head : layer;
    changes.push_back({fwd.first_start, bytes, fwd.first});
    const auto bwd = backward.find(key);
    if (bwd != backward.end()) changes.push_back({bwd->second.last_end, -bytes, bwd->second.last});
  }
  for (const auto& [key, rec] : recompute) {
    const auto bwd = backward.find(key);
    if (recomputed <= 0.0 || bwd == backward.end()) continue;
    changes.push_back({rec.first_start, recomputed, rec.first});
    changes.push_back({bwd->second.last_end, -recomputed, bwd->second.last});
  }
  // Frees before allocations at the same moment (the allocator reuses the block).
  std::stable_sort(changes.begin(), changes.end(), [](const Change& x, const Change& y) {
    return x.time != y.time ? x.time < y.time : x.bytes < y.bytes;
  });

  MemoryTimeline m;
  m.rank = rank;
  m.series.name = "memory rank " + std::to_string(rank);
  double now = states;
  m.series.points.emplace_back(0, now);
  m.peak_bytes = now;
  for (const Change& c : changes) {
    now += c.bytes;
    if (m.series.points.back().first == c.time) m.series.points.back().second = now;
    else m.series.points.emplace_back(c.time, now);
    if (now > m.peak_bytes) {
      m.peak_bytes = now;
      m.peak_time = c.time;
      m.peak_task = out.iteration.graph[c.task].name;
    }
  }
  return m;
}

}  // namespace trainsim::exec
