#include "execution/rank_time.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "core/intervals.h"

namespace trainsim::exec {

namespace {

using core::Interval;
using core::union_length;

// |a U b|, both sorted here unless already in order (a lane's spans come in time
// order: merging instead of sorting is most of a small run's metrics).
core::Time union_of(const std::vector<Interval>& a, std::vector<Interval> b) {
  if (!std::is_sorted(b.begin(), b.end())) std::sort(b.begin(), b.end());
  std::vector<Interval> both(a.size() + b.size());
  std::merge(a.begin(), a.end(), b.begin(), b.end(), both.begin());
  return union_length(std::move(both));
}

}  // namespace

RankTime rank_time(const SimulationOutput& out, int rank) {
  const auto& graph = out.iteration.graph;
  std::vector<Interval> compute;
  std::vector<Interval> tp, dp, other, comm, optimizer;
  RankTime r;
  for (const Span& span : out.timeline.spans) {
    if (span.rank != rank) continue;
    const workload::Task& t = graph[span.task];
    const core::Time length = span.end - span.start;
    // The optimizer step's kernels, and CPU optimizer offload's copies and host
    // update beside them: the union of their spans.
    if (t.category == workload::Category::kOptimizer) {
      compute.emplace_back(span.start, span.end);
      optimizer.emplace_back(span.start, span.end);
      continue;
    }
    switch (t.stream) {
      case workload::Stream::kCompute:
        compute.emplace_back(span.start, span.end);
        r.compute += length;
        if (t.category == workload::Category::kRecompute) r.recompute += length;
        continue;
      case workload::Stream::kTpComm: tp.emplace_back(span.start, span.end); break;
      case workload::Stream::kDpComm: dp.emplace_back(span.start, span.end); break;
      default: other.emplace_back(span.start, span.end); break;
    }
    comm.emplace_back(span.start, span.end);
  }
  std::sort(optimizer.begin(), optimizer.end());
  r.optimizer = union_length(std::move(optimizer));
  if (!std::is_sorted(compute.begin(), compute.end())) std::sort(compute.begin(), compute.end());
  const core::Time busy = union_length(compute);
  const auto exposed = [&](std::vector<Interval> lane) { return lane.empty() ? 0 : union_of(compute, std::move(lane)) - busy; };
  const core::Time all = union_of(compute, std::move(comm));
  r.exposed = all - busy;
  r.idle = out.timeline.makespan - all;
  r.exposed_tp = exposed(std::move(tp));
  r.exposed_dp = exposed(std::move(dp));
  r.exposed_other = exposed(std::move(other));
  return r;
}

}  // namespace trainsim::exec
