#include "network/collective_engine.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <stdexcept>

#include <fmt/format.h>

namespace trainsim::net {

core::Time ceil_to_time(double seconds) {
  // A thousandth of a nanosecond of slack, so that a rate computed as C/n and a
  // load computed as n x bytes / C land on the same nanosecond.
  const double ns = std::ceil(seconds * 1e9 - 1e-3);
  return ns > 0.0 ? static_cast<core::Time>(ns) : 0;
}

core::Time RoutedSchedule::duration(double bytes) const {
  core::Time t = 0;
  for (const RoutedPhase& p : phases)
    t += core::from_seconds(p.latency_at(bytes)) + ceil_to_time(bytes * p.seconds_per_byte);
  return t;
}

CollectivePlanner::CollectivePlanner(const Topology& topology, Algorithm forced, int multipath, Routing routing)
    : topology_(topology), router_(topology, routing), forced_(forced), multipath_(std::max(1, multipath)) {}

std::shared_ptr<const std::vector<std::vector<long long>>> CollectivePlanner::members_of(const Collective& c) {
  const CommGroup& g = c.group;
  if (g.members) {
    if (g.members->empty() || static_cast<int>(g.members->front().size()) != g.size)
      throw std::invalid_argument(fmt::format("collective group: {} members listed for a group of {}",
                                              g.members->empty() ? 0 : g.members->front().size(), g.size));
    return g.members;
  }
  if (g.size < 1 || g.size != g.nodes * g.ranks_per_node)
    throw std::invalid_argument(fmt::format("collective group: size {} != nodes {} x ranks per node {}", g.size,
                                            g.nodes, g.ranks_per_node));
  if (g.nodes > topology_.num_nodes() || g.ranks_per_node > topology_.gpus_per_node())
    throw std::invalid_argument(fmt::format("collective group of {} nodes x {} GPUs on a cluster of {} nodes x {} GPUs",
                                            g.nodes, g.ranks_per_node, topology_.num_nodes(),
                                            topology_.gpus_per_node()));
  auto& slot = default_members_[{g.size, g.nodes, g.ranks_per_node}];
  if (!slot) {
    std::vector<long long> ranks;
    for (int j = 0; j < g.nodes; ++j)
      for (int i = 0; i < g.ranks_per_node; ++i)
        ranks.push_back(static_cast<long long>(j) * topology_.gpus_per_node() + i);
    slot = std::make_shared<const std::vector<std::vector<long long>>>(std::vector<std::vector<long long>>{ranks});
  }
  return slot;
}

namespace {
std::uint64_t flow_key(const Transfer& t, int way) {
  return (static_cast<std::uint64_t>(t.src) << 32) ^ static_cast<std::uint64_t>(t.dst) ^
         (static_cast<std::uint64_t>(t.rail + 1) << 56) ^ (static_cast<std::uint64_t>(way) << 48);
}
}  // namespace

RoutedSchedule CollectivePlanner::route(const Collective& c, Algorithm a,
                                        const std::vector<std::vector<long long>>& groups) {
  // Every copy of the group runs the same algorithm; their phases run together.
  std::vector<Phase> phases;
  for (const auto& g : groups) {
    Schedule s = build_schedule(c.kind, a, g, 1.0, topology_);
    if (phases.size() < s.phases.size()) phases.resize(s.phases.size());
    for (std::size_t i = 0; i < s.phases.size(); ++i) {
      phases[i].steps = std::max(phases[i].steps, s.phases[i].steps);
      phases[i].fixed_latency = std::max(phases[i].fixed_latency, s.phases[i].fixed_latency);
      if (&g == &groups.front()) phases[i].sized = s.phases[i].sized;  // the copies are alike
      phases[i].transfers.insert(phases[i].transfers.end(), s.phases[i].transfers.begin(), s.phases[i].transfers.end());
    }
  }
  RoutedSchedule out;
  out.algorithm = a;
  if (load_.size() != topology_.num_links()) load_.assign(topology_.num_links(), 0.0);
  std::vector<std::uint32_t> path;
  std::vector<std::uint32_t> touched;
  for (const Phase& ph : phases) {
    RoutedPhase rp;
    rp.offset.push_back(0);
    double slowest_path = 0.0;
    double cap_bound = 0.0;
    auto add_flow = [&](const std::vector<std::uint32_t>& links, double bytes, double cap) {
      for (std::uint32_t l : links) {
        if (load_[l] == 0.0) touched.push_back(l);
        load_[l] += bytes;
        rp.hops.push_back(static_cast<LinkId>(l));
      }
      rp.offset.push_back(static_cast<std::uint32_t>(rp.hops.size()));
      rp.bytes.push_back(bytes);
      rp.cap.push_back(cap > 0.0 ? cap : FlowSolver::kUnlimited);
      if (cap > 0.0) cap_bound = std::max(cap_bound, bytes / cap);
      slowest_path = std::max(slowest_path, router_.latency(links));
    };
    for (const Transfer& t : ph.transfers) {
      path.clear();
      if (t.ends == Transfer::Ends::kGpuToSwitch) {
        path.push_back(topology_.gpu_up(t.src));
        add_flow(path, t.bytes, t.rate_cap);
        continue;
      }
      if (t.ends == Transfer::Ends::kSwitchToGpu) {
        path.push_back(topology_.gpu_down(t.dst));
        add_flow(path, t.bytes, t.rate_cap);
        continue;
      }
      const bool between_nodes =
          topology_.vertex(topology_.gpu(t.src)).node != topology_.vertex(topology_.gpu(t.dst)).node;
      const int ways = between_nodes ? multipath_ : 1;
      for (int w = 0; w < ways; ++w) {
        path.clear();
        router_.route(t.src, t.dst, t.rail, flow_key(t, w), path);
        add_flow(path, t.bytes / ways, t.rate_cap);
      }
    }
    double link_bound = 0.0;
    for (std::uint32_t l : touched) {
      link_bound = std::max(link_bound, load_[l] / topology_.link(l).capacity);
      load_[l] = 0.0;
    }
    touched.clear();
    rp.seconds_per_byte = std::max(link_bound, cap_bound);
    rp.latency = ph.steps * slowest_path + ph.fixed_latency;
    rp.sized = ph.sized;
    out.phases.push_back(std::move(rp));
  }
  return out;
}

const RoutedSchedule& CollectivePlanner::plan(const Collective& c, Algorithm a) {
  auto members = members_of(c);
  const auto key = std::make_tuple(static_cast<const void*>(members.get()), c.kind, a);
  auto it = cache_.find(key);
  if (it != cache_.end()) return it->second;
  pinned_.try_emplace(members.get(), members);
  return cache_.emplace(key, route(c, a, *members)).first->second;
}

std::size_t CollectivePlanner::PlanKeyHash::operator()(const PlanKey& k) const noexcept {
  std::size_t h = std::hash<const void*>{}(k.members);
  const auto mix = [&h](std::size_t v) { h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2); };
  mix(static_cast<std::size_t>(k.size));
  mix(static_cast<std::size_t>(k.nodes));
  mix(static_cast<std::size_t>(k.ranks_per_node));
  mix(static_cast<std::size_t>(k.kind));
  mix(std::hash<double>{}(k.bytes));
  return h;
}

const RoutedSchedule& CollectivePlanner::plan(const Collective& c) {
  // A group's member lists are pinned by the first plan of it (pinned_), so
  // their address names them for the planner's life; without lists, the shape
  // does.
  const CommGroup& g = c.group;
  const PlanKey key{g.members.get(), g.size, g.nodes, g.ranks_per_node, c.kind, c.bytes};
  if (const auto it = planned_.find(key); it != planned_.end()) return *it->second;
  const RoutedSchedule& s = choose(c);
  planned_.emplace(key, &s);
  return s;
}

const RoutedSchedule& CollectivePlanner::choose(const Collective& c) {
  auto members = members_of(c);
  const std::vector<long long>& group = members->front();
  if (forced_ != Algorithm::kAuto && !unavailable(c.kind, forced_, group, topology_)) return plan(c, forced_);
  const auto key = std::make_tuple(static_cast<const void*>(members.get()), c.kind, c.bytes);
  if (auto it = choice_.find(key); it != choice_.end()) return plan(c, it->second);
  const std::vector<Algorithm> options = candidates(c.kind, group, topology_);
  if (options.empty()) {
    if (group.size() < 2) return plan(c, Algorithm::kRing);
    throw std::invalid_argument(fmt::format("no algorithm runs {} over {} ranks", to_string(c.kind), group.size()));
  }
  // NCCL picks the algorithm its cost model says is fastest for the size
  // (src/graph/tuning.cc); so does this planner, with its own model.
  Algorithm best = options.front();
  core::Time best_time = std::numeric_limits<core::Time>::max();
  for (Algorithm a : options) {
    const core::Time t = plan(c, a).duration(c.bytes);
    if (t < best_time) {
      best_time = t;
      best = a;
    }
  }
  choice_.emplace(key, best);
  return plan(c, best);
}

void ScheduleBackend::start(const Collective& c, core::Simulator& sim, std::function<void()> on_done) {
  sim.schedule_after(planner_.plan(c).duration(c.bytes), std::move(on_done));
}

FlowBackend::FlowBackend(CollectivePlanner& planner, std::vector<std::uint32_t> watched, bool exclusive_phases)
    : planner_(planner), watched_(std::move(watched)), exclusive_phases_(exclusive_phases) {
  const Topology& t = planner.topology();
  for (std::uint32_t l = 0; l < t.num_links(); ++l) solver_.add_link(t.link(l).capacity);
  stats_.bytes.assign(t.num_links(), 0.0);
  last_utilization_.assign(watched_.size(), -1.0);
  watched_link_.assign(t.num_links(), 0);
  for (const std::uint32_t l : watched_) watched_link_.at(l) = 1;
  owner_.assign(t.num_links(), 0);
}

void FlowBackend::start(const Collective& c, core::Simulator& sim, std::function<void()> on_done) {
  const RoutedSchedule& s = planner_.plan(c);
  std::size_t run = 0;
  if (!free_runs_.empty()) {
    run = free_runs_.back();
    free_runs_.pop_back();
  } else {
    run = runs_.size();
    runs_.emplace_back();
  }
  runs_[run] = Running{&s, c.bytes, 0, 0, std::move(on_done), &sim, exclusive_phases_ ? solo_rates(s) : nullptr};
  begin_phase(run, sim);
}

void FlowBackend::begin_phase(std::size_t run, core::Simulator& sim) {
  Running& r = runs_[run];
  if (r.phase == r.schedule->phases.size()) {
    std::function<void()> done = std::move(r.done);
    r = Running{};
    free_runs_.push_back(run);
    done();
    return;
  }
  const double latency = r.schedule->phases[r.phase].latency_at(r.bytes);
  sim.schedule_after(core::from_seconds(latency), [this, run] { add_flows(run, *runs_[run].sim); });
}

void FlowBackend::add_flows(std::size_t run, core::Simulator& sim) {
  sync_clock(sim);
  Running& r = runs_[run];
  const RoutedPhase& p = r.schedule->phases[r.phase];
  if (p.flows() == 0) {
    phase_done(run, sim);
    return;
  }
  if (!add_exclusive(run)) {
    adopt_owners(p.hops);
    for (std::size_t i = 0; i < p.flows(); ++i) {
      const std::span<const LinkId> path(p.hops.data() + p.offset[i], p.offset[i + 1] - p.offset[i]);
      solver_.add_flow(path, p.bytes[i] * r.bytes, p.cap[i], (static_cast<std::uint64_t>(run) << 32) | i);
    }
  }
  r.pending = p.flows();
  stats_.flows += p.flows();
  request_solve(sim);
}

void FlowBackend::phase_done(std::size_t run, core::Simulator& sim) {
  ++runs_[run].phase;
  begin_phase(run, sim);
}

void FlowBackend::request_solve(core::Simulator& sim) {
  if (solve_pending_) return;
  solve_pending_ = true;
  // After every other event of this instant, so their starts and finishes share one solve.
  sim.schedule_after(0, [this, &sim] {
    solve_pending_ = false;
    solve_and_wake(sim);
  });
}

void FlowBackend::sync_clock(core::Simulator& sim) {
  const double now = core::to_seconds(sim.now());
  if (now > solver_.now() && !solver_.needs_solve()) solver_.advance(now - solver_.now());
}

void FlowBackend::solve_and_wake(core::Simulator& sim) {
  solver_.solve();
  ++stats_.solves;
  // The watched links' utilizations change only with the solver's flows or rates.
  const bool changed = solver_.version() != watched_version_;
  watched_version_ = solver_.version();
  for (std::size_t i = 0; changed && i < watched_.size(); ++i) {
    const double u = solver_.link_utilization(static_cast<LinkId>(watched_[i]));
    if (u != last_utilization_[i]) {
      stats_.series[watched_[i]].emplace_back(sim.now(), u);
      last_utilization_[i] = u;
    }
  }
  if (wake_pending_) sim.cancel(wake_event_);
  wake_pending_ = false;
  // The first finish of all flows, in the solver or in exclusive phases: what
  // time_to_next_completion() gives with every flow in the solver.
  double next = solver_.time_to_next_completion();
  drop_stale_due();
  if (!due_heap_.empty()) next = std::min(next, std::max(0.0, due_heap_.front().finish - solver_.now()));
  if (!std::isfinite(next)) return;
  wake_pending_ = true;
  wake_event_ = sim.schedule_after(ceil_to_time(next), [this, &sim] { wake(sim); });
}

void FlowBackend::wake(core::Simulator& sim) {
  wake_pending_ = false;
  sync_clock(sim);
  // The clock is rounded up to whole nanoseconds: flows due within half of one are done.
  constexpr double kTolerance = 0.5e-9;
  done_.clear();
  done_ids_.clear();
  solver_.take_completed(kTolerance, done_, &done_ids_);
  take_due(solver_.now() + kTolerance);  // the horizon take_completed() uses
  std::vector<std::size_t> finished_phases;
  finished_phases.swap(finished_phases_);  // its capacity, without reentrancy concerns
  finished_phases.clear();
  // In order of flow id, as if every flow had been in the solver: phases end
  // in the order of their last flows.
  std::size_t e = 0;
  for (std::size_t k = 0; k < done_.size(); ++k) {
    for (; e < due_.size() && exclusive_[due_[e]].first_id < done_ids_[k]; ++e)
      account_exclusive(due_[e], finished_phases);
    account_flow(done_[k], finished_phases);
  }
  for (; e < due_.size(); ++e) account_exclusive(due_[e], finished_phases);
  request_solve(sim);
  for (std::size_t run : finished_phases) phase_done(run, sim);
  finished_phases.swap(finished_phases_);
}

void FlowBackend::account_flow(std::uint64_t tag, std::vector<std::size_t>& finished) {
  const std::size_t run = static_cast<std::size_t>(tag >> 32);
  const auto flow = static_cast<std::uint32_t>(tag & 0xffffffffU);
  const RoutedPhase& p = runs_[run].schedule->phases[runs_[run].phase];
  const double bytes = p.bytes[flow] * runs_[run].bytes;
  for (std::uint32_t h = p.offset[flow]; h < p.offset[flow + 1]; ++h)
    stats_.bytes[static_cast<std::size_t>(p.hops[h])] += bytes;
  if (--runs_[run].pending == 0) finished.push_back(run);
}

}  // namespace trainsim::net
