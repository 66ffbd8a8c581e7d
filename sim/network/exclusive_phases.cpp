// FlowBackend's exclusive phases (collective_engine.h; docs/architecture.md,
// "Engine speed"): phases alone on their links, accounted for outside the
// solver with the solver's own arithmetic.
#include <algorithm>
#include <cmath>

#include "network/collective_engine.h"

namespace trainsim::net {

namespace {

// Min-heap order for std::push_heap/pop_heap: earliest finish first, ties to
// the smallest id.
struct LaterDue {
  template <class T>
  bool operator()(const T& a, const T& b) const {
    return a.finish > b.finish || (a.finish == b.finish && a.first_id > b.first_id);
  }
};

std::span<const LinkId> path_of(const RoutedPhase& p, std::size_t flow) {
  return {p.hops.data() + p.offset[flow], p.offset[flow + 1] - p.offset[flow]};
}

}  // namespace

// Phases of more flows than this are left to the solver: they span many links,
// are rarely alone on them for long, and solving one alone costs what a solve of
// it in the solver does. An engine limit; results are the same either way.
constexpr std::size_t kMaxExclusiveFlows = 256;

// Per phase of `s`, the rate of its flows with nothing else on their links: its
// flows alone in a solver of their own links, numbered in the order of the
// topology's ids (progressive filling breaks ties by link id and flow id, so
// the order is kept and the result is the same bit for bit). Exclusive phases
// are those whose flows all carry the same bytes and all get the same rate
// alone, so that they all finish at the same time whatever the size. Empty for
// a phase that is never exclusive: for that reason, too many flows, a flow
// without links (the solver rates those apart), or a watched link (its
// utilization series comes from the solver).
const std::vector<std::vector<double>>* FlowBackend::solo_rates(const RoutedSchedule& s) {
  const auto [it, added] = solo_.try_emplace(&s);
  std::vector<std::vector<double>>& rates = it->second;
  if (!added) return &rates;
  rates.resize(s.phases.size());
  std::vector<std::uint32_t> links;
  std::vector<LinkId> path;
  std::vector<FlowId> ids;
  for (std::size_t k = 0; k < s.phases.size(); ++k) {
    const RoutedPhase& p = s.phases[k];
    bool eligible = p.flows() > 0 && p.flows() <= kMaxExclusiveFlows;
    for (std::size_t i = 0; eligible && i < p.flows(); ++i)
      eligible = !path_of(p, i).empty() && p.bytes[i] == p.bytes[0];
    links.clear();
    for (const LinkId h : p.hops) {
      links.push_back(static_cast<std::uint32_t>(h));
      eligible = eligible && watched_link_[links.back()] == 0;
    }
    if (!eligible) continue;
    std::sort(links.begin(), links.end());
    links.erase(std::unique(links.begin(), links.end()), links.end());
    FlowSolver alone;
    for (const std::uint32_t l : links) alone.add_link(solver_.capacity(static_cast<LinkId>(l)));
    ids.clear();
    for (std::size_t i = 0; i < p.flows(); ++i) {
      path.clear();
      for (const LinkId h : path_of(p, i)) {
        const auto local = std::lower_bound(links.begin(), links.end(), static_cast<std::uint32_t>(h)) - links.begin();
        path.push_back(static_cast<LinkId>(local));
      }
      ids.push_back(alone.add_flow(path, 0.0, p.cap[i]));
    }
    alone.solve();
    for (const FlowId id : ids) {
      if (alone.rate(id) != alone.rate(ids.front())) eligible = false;
      rates[k].push_back(alone.rate(id));
    }
    if (!eligible) rates[k].clear();
  }
  return &rates;
}

bool FlowBackend::add_exclusive(std::size_t run) {
  const Running& r = runs_[run];
  if (r.solo == nullptr) return false;
  const std::vector<double>& rates = (*r.solo)[r.phase];
  if (rates.empty()) return false;
  const RoutedPhase& p = r.schedule->phases[r.phase];
  for (const LinkId h : p.hops)
    if (owner_[static_cast<std::size_t>(h)] != 0 || !solver_.link_idle(h)) return false;
  // The solver would rate the flows at the next solve, at this clock (the
  // solve runs at this instant), with every byte still to send; all the flows
  // have the same bytes and rate (solo_rates), hence this finish.
  const double now = solver_.now();
  const double finish = FlowSolver::finish_time(now, p.bytes[0] * r.bytes, rates[0]);
  if (!std::isfinite(finish)) return false;

  std::uint32_t index = 0;
  if (!free_exclusive_.empty()) {
    index = free_exclusive_.back();
    free_exclusive_.pop_back();
  } else {
    index = static_cast<std::uint32_t>(exclusive_.size());
    exclusive_.emplace_back();
  }
  const std::uint64_t first_id = solver_.reserve_ids(p.flows());
  exclusive_[index] = Exclusive{run, first_id, now, finish, stats_.solves, true};
  for (const LinkId h : p.hops) owner_[static_cast<std::size_t>(h)] = index + 1;
  due_heap_.push_back(Due{finish, first_id, index});
  std::push_heap(due_heap_.begin(), due_heap_.end(), LaterDue{});
  stats_.exclusive_flows += p.flows();
  return true;
}

void FlowBackend::adopt_owners(std::span<const LinkId> links) {
  for (const LinkId h : links)
    if (const std::uint32_t owner = owner_[static_cast<std::size_t>(h)]; owner != 0) adopt(owner - 1);
}

void FlowBackend::adopt(std::uint32_t index) {
  const Exclusive& x = exclusive_[index];
  const Running& r = runs_[x.run];
  const RoutedPhase& p = r.schedule->phases[r.phase];
  const std::vector<double>& rates = (*r.solo)[r.phase];
  // Rated by a solve since it started (stats_.solves has grown), or still
  // waiting for the solve of its instant.
  const bool rated = stats_.solves > x.solves_at_start;
  for (std::size_t i = 0; i < p.flows(); ++i)
    solver_.adopt_flow(x.first_id + i, path_of(p, i), p.bytes[i] * r.bytes, p.cap[i],
                       (static_cast<std::uint64_t>(x.run) << 32) | i, x.since, rated ? rates[i] : 0.0);
  stats_.adopted_flows += p.flows();
  release(index);
}

void FlowBackend::release(std::uint32_t index) {
  Exclusive& x = exclusive_[index];
  const Running& r = runs_[x.run];
  for (const LinkId h : r.schedule->phases[r.phase].hops)
    if (owner_[static_cast<std::size_t>(h)] == index + 1) owner_[static_cast<std::size_t>(h)] = 0;
  x.live = false;
  free_exclusive_.push_back(index);
}

void FlowBackend::drop_stale_due() {
  while (!due_heap_.empty()) {
    const Due& top = due_heap_.front();
    const Exclusive& x = exclusive_[top.index];
    if (x.live && x.first_id == top.first_id) return;
    std::pop_heap(due_heap_.begin(), due_heap_.end(), LaterDue{});
    due_heap_.pop_back();
  }
}

void FlowBackend::take_due(double horizon) {
  due_.clear();
  for (drop_stale_due(); !due_heap_.empty() && due_heap_.front().finish <= horizon; drop_stale_due()) {
    due_.push_back(due_heap_.front().index);
    std::pop_heap(due_heap_.begin(), due_heap_.end(), LaterDue{});
    due_heap_.pop_back();
  }
  std::sort(due_.begin(), due_.end(),
            [this](std::uint32_t a, std::uint32_t b) { return exclusive_[a].first_id < exclusive_[b].first_id; });
}

void FlowBackend::account_exclusive(std::uint32_t index, std::vector<std::size_t>& finished) {
  const std::size_t run = exclusive_[index].run;
  Running& r = runs_[run];
  const RoutedPhase& p = r.schedule->phases[r.phase];
  for (std::size_t i = 0; i < p.flows(); ++i) {
    const double bytes = p.bytes[i] * r.bytes;
    for (const LinkId h : path_of(p, i)) stats_.bytes[static_cast<std::size_t>(h)] += bytes;
  }
  release(index);
  r.pending = 0;
  finished.push_back(run);
}

}  // namespace trainsim::net
