#include "cluster/schedule.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <utility>

#include "core/rng.h"
#include "core/simulator.h"

namespace trainsim::cluster {

namespace {

enum class State { kWaiting, kQueued, kRunning, kCheckpointing, kDone };

struct Live {
  State state = State::kWaiting;
  long long remaining = 0;
  double restart_owed_s = 0.0;  // paid at the next start (after a preemption)
  core::Time release = 0;       // when its GPUs come back: its end, or its checkpoint's
  std::optional<core::EventId> end_event;  // its end, while it runs
  // The running segment: training starts after its restart; `done` iterations (a
  // fraction included) by `mark`, at `pace` since.
  core::Time work_start = 0;
  core::Time mark = 0;
  double done = 0.0;
  JobPace pace;
  GroupDuty duty;                // its traffic on the cluster's groups, alone
  std::map<int, double> shares;  // the uplink share it runs with, by group (none: all)
  std::optional<int> resize_to;  // an elastic job checkpointing to change size
  std::optional<core::EventId> requeue_event;  // the end of a preemption's checkpoint
};

// Where the head job of the queue will start, for EASY backfill (Lifka 1995):
// the earliest release after which it fits.
struct Reservation {
  std::size_t head = 0;
  core::Time shadow = 0;
};

class Scheduler {
 public:
  Scheduler(const config::ClusterWorkload& w, const JobTimer& timer)
      : w_(w),
        timer_(timer),
        nodes_(fabric_shape(w.cluster), w.scheduler.placement, w.scheduler.seed),
        live_(w.jobs.size()),
        result_{std::vector<JobRecord>(w.jobs.size()), {}, {}, 0.0},
        rng_(w.failures ? w.failures->seed : 1) {}

  ScheduleResult run() {
    for (std::size_t j = 0; j < w_.jobs.size(); ++j) {
      live_[j].remaining = w_.jobs[j].iterations;
      sim_.schedule_at(core::from_seconds(w_.jobs[j].arrival_s), [this, j] { arrive(j); });
    }
    if (w_.failures) schedule_failure();
    sim_.run();
    return std::move(result_);
  }

 private:
  [[nodiscard]] const config::ClusterJob& job(std::size_t j) const { return w_.jobs[j]; }
  // Job j's segment now (its last).
  [[nodiscard]] Segment& current(std::size_t j) { return result_.jobs[j].segments.back(); }
  [[nodiscard]] const Segment& current(std::size_t j) const { return result_.jobs[j].segments.back(); }

  void arrive(std::size_t j) {
    live_[j].state = State::kQueued;
    queue_.push_back(j);
    pass();
  }

  // The queue in the policy's order: arrival (then the file's order), or priority first.
  [[nodiscard]] std::vector<std::size_t> ordered_queue() const {
    std::vector<std::size_t> order = queue_;
    const bool by_priority = w_.scheduler.policy == config::SchedulerPolicy::kPriority;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      if (by_priority && job(a).priority != job(b).priority) return job(a).priority > job(b).priority;
      if (job(a).arrival_s != job(b).arrival_s) return job(a).arrival_s < job(b).arrival_s;
      return a < b;
    });
    return order;
  }

  // Where job j starts now: its size (an elastic job's largest that fits and, behind a
  // reservation, that may backfill); none when it cannot.
  [[nodiscard]] std::optional<Placement> choose(std::size_t j, const std::optional<Reservation>& reservation) const {
    for (int gpus : job(j).sizes_largest_first()) {
      const std::optional<Placement> p = nodes_.place(gpus);
      if (p && (!reservation || may_backfill(j, *p, *reservation))) return p;
    }
    return std::nullopt;
  }

  // One scheduling pass at the current time (docs/cluster.md, "Policies").
  void pass() {
    std::optional<Reservation> reservation;
    for (std::size_t j : ordered_queue()) {
      if (!reservation) {
        if (const std::optional<Placement> p = choose(j, std::nullopt)) {
          start(j, *p);
          continue;
        }
        if (w_.scheduler.policy == config::SchedulerPolicy::kFifo) break;
        if (w_.scheduler.policy == config::SchedulerPolicy::kPriority && w_.scheduler.preemption) preempt_for(j);
        reservation = reserve(j);
        continue;
      }
      if (const std::optional<Placement> p = choose(j, reservation)) start(j, *p);
    }
    if (queue_.empty()) grow();
    update_contention();
    record_usage();
  }

  // Elastic jobs grow into GPUs no job waits for (docs/cluster.md, "Elastic jobs"):
  // each running one, in the file's order, to its largest size that fits in its own
  // GPUs and the free ones, when the resize (a checkpoint, then a restart) and the
  // rest at the new pace end sooner than the rest at the current one.
  void grow() {
    for (std::size_t j = 0; j < live_.size(); ++j) {
      Live& l = live_[j];
      if (job(j).elastic.empty() || l.state != State::kRunning || sim_.now() < l.work_start) continue;
      const Placement& now_on = current(j).placement;
      NodeState without = nodes_;
      without.give_back(now_on);
      advance(j);
      const double left = std::max(0.0, static_cast<double>(l.remaining) - l.done);
      const PreemptionCost cost = timer_.preemption(j);
      for (int gpus : job(j).sizes_largest_first()) {
        if (gpus <= now_on.gpus()) break;
        const std::optional<Placement> p = without.place(gpus);
        if (!p) continue;
        const double stay = left * l.pace.iteration_s;
        const double move = cost.checkpoint_s + cost.restart_s + left * paced(j, *p, {}).iteration_s;
        if (move < stay) resize(j, gpus);
        break;
      }
    }
  }

  // Jobs holding GPUs, by when they give them back.
  [[nodiscard]] std::vector<std::size_t> holders() const {
    std::vector<std::size_t> out;
    for (std::size_t j = 0; j < live_.size(); ++j)
      if (live_[j].state == State::kRunning || live_[j].state == State::kCheckpointing) out.push_back(j);
    std::stable_sort(out.begin(), out.end(),
                     [&](std::size_t a, std::size_t b) { return live_[a].release < live_[b].release; });
    return out;
  }

  // The earliest release (a job's end or checkpoint, a node's repair) after which the
  // head fits.
  [[nodiscard]] Reservation reserve(std::size_t head) const {
    NodeState later = nodes_;
    std::vector<std::pair<core::Time, std::ptrdiff_t>> releases;  // (time, job, or -1 - node)
    for (std::size_t h : holders()) releases.emplace_back(live_[h].release, static_cast<std::ptrdiff_t>(h));
    for (const auto& [node, at] : repair_at_) releases.emplace_back(at, -1 - node);
    std::stable_sort(releases.begin(), releases.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    for (const auto& [at, who] : releases) {
      if (who >= 0) later.give_back(current(static_cast<std::size_t>(who)).placement);
      else later.repair(static_cast<int>(-1 - who));
      if (later.place(job(head).min_gpus())) return {head, at};
    }
    return {head, sim_.now()};  // not reached: every job fits the whole cluster
  }

  // EASY: a job behind the head may start now if it ends before the head's
  // reservation, or leaves the head room at it.
  [[nodiscard]] bool may_backfill(std::size_t j, const Placement& p, const Reservation& r) const {
    const core::Time end = sim_.now() + run_length(j, p);
    if (end <= r.shadow) return true;
    NodeState at_shadow = nodes_;
    at_shadow.take(p);
    for (std::size_t h : holders())
      if (live_[h].release <= r.shadow) at_shadow.give_back(current(h).placement);
    for (const auto& [node, at] : repair_at_)
      if (at <= r.shadow) at_shadow.repair(node);
    return at_shadow.place(job(r.head).min_gpus()).has_value();
  }

  [[nodiscard]] core::Time run_length(std::size_t j, const Placement& p) const {
    const JobPace pace = timer_.pace(j, p);
    return core::from_seconds(live_[j].restart_owed_s +
                              static_cast<double>(live_[j].remaining) * pace.iteration_s * stretch(j, p));
  }

  // Under node failures a job checkpoints every tau of training, for C each: its
  // iterations take (tau + C) / tau as long (docs/cluster.md, "Failures").
  [[nodiscard]] double stretch(std::size_t j, const Placement& p) const {
    const PreemptionCost cost = timer_.preemption(j);
    if (!w_.failures || !cost.checkpoint_interval) return 1.0;
    const double tau = cost.checkpoint_interval(static_cast<int>(p.nodes.size()));
    return (tau + cost.checkpoint_s) / tau;
  }

  // The job's pace on `p` with `shares` of its groups' uplinks, checkpoints included.
  [[nodiscard]] JobPace paced(std::size_t j, const Placement& p, const std::map<int, double>& shares) const {
    JobPace pace = shares.empty() ? timer_.pace(j, p) : timer_.shared_pace(j, p, shares);
    pace.iteration_s *= stretch(j, p);
    return pace;
  }

  void start(std::size_t j, const Placement& p) {
    queue_.erase(std::find(queue_.begin(), queue_.end(), j));
    nodes_.take(p);
    Segment s;
    s.placement = p;
    s.start_s = core::to_seconds(sim_.now());
    s.restart_s = live_[j].restart_owed_s;
    s.pace = paced(j, p, {});
    s.checkpoint_share = 1.0 - 1.0 / stretch(j, p);
    result_.jobs[j].segments.push_back(s);
    Live& l = live_[j];
    l.state = State::kRunning;
    l.work_start = sim_.now() + core::from_seconds(l.restart_owed_s);
    l.mark = l.work_start;
    l.done = 0.0;
    l.pace = s.pace;
    l.shares.clear();
    l.duty = contention() ? timer_.traffic(j, p) : GroupDuty{};
    schedule_end(j);
    // An elastic job may grow once its restart is done: a pass then.
    if (!job(j).elastic.empty() && l.work_start > sim_.now()) sim_.schedule_at(l.work_start, [this] { pass(); });
  }

  [[nodiscard]] bool contention() const {
    return w_.scheduler.contention && timer_.traffic && timer_.shared_pace;
  }

  // The iterations done by now, at the pace since the last mark.
  void advance(std::size_t j) {
    Live& l = live_[j];
    if (sim_.now() <= l.mark) return;
    l.done += core::to_seconds(sim_.now() - l.mark) / l.pace.iteration_s;
    l.mark = sim_.now();
  }

  void schedule_end(std::size_t j) {
    Live& l = live_[j];
    if (l.end_event) sim_.cancel(*l.end_event);
    const double left = std::max(0.0, static_cast<double>(l.remaining) - l.done) * l.pace.iteration_s;
    l.release = std::max(sim_.now(), l.mark) + core::from_seconds(left);
    l.end_event = sim_.schedule_at(l.release, [this, j] { finish(j); });
  }

  // Each running job's share of the uplinks of the groups its traffic leaves through,
  // from its neighbours' duties there (cluster/contention.h); a job whose shares
  // changed continues at its new pace.
  void update_contention() {
    if (!contention()) return;
    std::map<int, std::vector<std::size_t>> users;  // group -> running jobs with traffic there
    for (std::size_t j = 0; j < live_.size(); ++j)
      if (live_[j].state == State::kRunning)
        for (const auto& [g, d] : live_[j].duty) users[g].push_back(j);
    for (std::size_t j = 0; j < live_.size(); ++j) {
      Live& l = live_[j];
      if (l.state != State::kRunning || l.duty.empty()) continue;
      std::map<int, double> shares;
      for (const auto& [g, d] : l.duty) {
        std::vector<double> others;
        for (std::size_t k : users[g])
          if (k != j) others.push_back(live_[k].duty.at(g));
        if (!others.empty()) shares[g] = quantized_share(expected_share(others));
      }
      if (shares == l.shares) continue;
      advance(j);
      l.shares = shares;
      l.pace = paced(j, current(j).placement, shares);
      current(j).pace_changes.emplace_back(core::to_seconds(sim_.now()), l.pace);
      schedule_end(j);
    }
  }

  void finish(std::size_t j) {
    Segment& s = current(j);
    Live& l = live_[j];
    l.end_event.reset();
    s.iterations = l.remaining;
    s.train_s = core::to_seconds(sim_.now() - l.work_start);
    s.end_s = core::to_seconds(sim_.now());
    l.remaining = 0;
    l.state = State::kDone;
    nodes_.give_back(s.placement);
    result_.jobs[j].end_s = s.end_s;
    result_.jobs[j].finished = true;
    ++finished_;
    result_.makespan_s = std::max(result_.makespan_s, s.end_s);
    pass();
  }

  // Priority with preemption: running jobs of lower priority (the lowest first, the
  // latest started first among equals) write a checkpoint and give their GPUs back
  // until `head` fits; none when it fits once the checkpoints under way end, or
  // when all of them would not make room.
  void preempt_for(std::size_t head) {
    NodeState after = nodes_;
    std::vector<std::size_t> candidates;
    for (std::size_t h = 0; h < live_.size(); ++h) {
      if (live_[h].state == State::kCheckpointing) after.give_back(current(h).placement);
      if (live_[h].state == State::kRunning && job(h).priority < job(head).priority && live_[h].release > sim_.now())
        candidates.push_back(h);
    }
    const int need = job(head).min_gpus();
    if (after.place(need)) return;
    std::stable_sort(candidates.begin(), candidates.end(), [&](std::size_t a, std::size_t b) {
      if (job(a).priority != job(b).priority) return job(a).priority < job(b).priority;
      if (current(a).start_s != current(b).start_s) return current(a).start_s > current(b).start_s;
      return a > b;
    });
    if (shrink_for(need, candidates, after)) return;
    std::vector<std::size_t> victims;
    for (std::size_t v : candidates) {
      after.give_back(current(v).placement);
      victims.push_back(v);
      if (after.place(need)) {
        for (std::size_t x : victims) preempt(x);
        return;
      }
    }
  }

  // Elastic candidates shrink before anyone is preempted: each, in the victims' order,
  // to its largest size at which `need` GPUs fit beside it, else to its smallest, until
  // they fit; nothing changes when shrinking them all does not make room.
  bool shrink_for(int need, const std::vector<std::size_t>& candidates, const NodeState& start_state) {
    NodeState after = start_state;
    std::vector<std::pair<std::size_t, int>> shrinks;  // (job, new size)
    for (std::size_t v : candidates) {
      const Placement& on = current(v).placement;
      if (job(v).elastic.empty() || on.gpus() <= job(v).min_gpus()) continue;
      NodeState without = after;
      without.give_back(on);
      std::optional<std::pair<int, NodeState>> chosen;
      for (int gpus : job(v).sizes_largest_first()) {
        if (gpus >= on.gpus()) continue;
        NodeState trial = without;
        const std::optional<Placement> p = trial.place(gpus);
        if (!p) continue;
        trial.take(*p);
        chosen = {gpus, trial};
        if (trial.place(need)) break;
      }
      if (!chosen) continue;
      after = chosen->second;
      shrinks.emplace_back(v, chosen->first);
      if (after.place(need)) {
        for (const auto& [x, gpus] : shrinks) resize(x, gpus);
        return true;
      }
    }
    return false;
  }


  // An elastic job changes size: it stops as a preempted job does (a checkpoint on its
  // GPUs), then restarts at once on `gpus` GPUs, paying its restart.
  void resize(std::size_t j, int gpus) {
    preempt(j);
    current(j).preempted = false;
    current(j).resized = true;
    live_[j].resize_to = gpus;
  }

  void preempt(std::size_t j) {
    Segment& s = current(j);
    Live& l = live_[j];
    sim_.cancel(*l.end_event);
    l.end_event.reset();
    advance(j);
    const double elapsed = core::to_seconds(sim_.now()) - s.start_s;
    s.restart_s = std::min(s.restart_s, elapsed);
    const double useful = elapsed - s.restart_s;
    // A whole iteration counts even when the fraction's rounding falls just short of it.
    s.iterations = std::min(l.remaining, static_cast<long long>(std::floor(l.done + 1e-9)));
    s.lost_s = std::max(0.0, (l.done - static_cast<double>(s.iterations)) * l.pace.iteration_s);
    s.train_s = useful - s.lost_s;
    const PreemptionCost cost = timer_.preemption(j);
    s.checkpoint_s = cost.checkpoint_s;
    s.preempted = true;
    l.remaining -= s.iterations;
    l.restart_owed_s = cost.restart_s;
    l.state = State::kCheckpointing;
    l.release = sim_.now() + core::from_seconds(cost.checkpoint_s);
    l.requeue_event = sim_.schedule_at(l.release, [this, j] { requeue(j); });
  }

  void requeue(std::size_t j) {
    live_[j].requeue_event.reset();
    Segment& s = current(j);
    s.end_s = core::to_seconds(sim_.now());
    nodes_.give_back(s.placement);
    live_[j].state = State::kQueued;
    queue_.push_back(j);
    // A resized job takes its new size first (or the largest that fits); else it waits.
    if (const std::optional<int> to = std::exchange(live_[j].resize_to, std::nullopt))
      for (int gpus : job(j).sizes_largest_first())
        if (gpus <= *to)
          if (const std::optional<Placement> p = nodes_.place(gpus)) {
            start(j, *p);
            break;
          }
    pass();
  }

  // Each node fails an exponential time of mean MTBF after it is up (at the start and
  // after each repair), drawn in node order; failures after every job has ended do
  // nothing.
  void schedule_failure() {
    for (int n = 0; n < nodes_.shape().nodes; ++n) schedule_failure(n);
  }

  void schedule_failure(int node) {
    const double after = rng_.exponential(w_.failures->node_mtbf_s);
    sim_.schedule_after(core::from_seconds(after), [this, node] { fail_node(node); });
  }

  void fail_node(int node) {
    if (finished_ == live_.size()) return;
    for (std::size_t j = 0; j < live_.size(); ++j) {
      const bool holds = (live_[j].state == State::kRunning || live_[j].state == State::kCheckpointing) &&
                         std::binary_search(current(j).placement.nodes.begin(), current(j).placement.nodes.end(), node);
      if (holds) interrupt(j);
    }
    nodes_.fail(node);
    const core::Time back = sim_.now() + core::from_seconds(w_.failures->repair_time_s);
    repair_at_[node] = back;
    result_.outages.push_back({node, core::to_seconds(sim_.now()), core::to_seconds(back)});
    sim_.schedule_at(back, [this, node] {
      nodes_.repair(node);
      repair_at_.erase(node);
      schedule_failure(node);
      pass();
    });
    pass();
  }

  // A node of job j failed: it keeps the iterations of its last periodic checkpoint
  // (every tau + C of its time after the restart; progress uniform over it), gives its
  // GPUs back at once and waits again, owing detection + restart + reload. A job
  // writing a preemption's checkpoint keeps what it had kept.
  void interrupt(std::size_t j) {
    Segment& s = current(j);
    Live& l = live_[j];
    s.failed = true;
    if (l.state == State::kRunning) {
      sim_.cancel(*l.end_event);
      l.end_event.reset();
      advance(j);
      const PreemptionCost cost = timer_.preemption(j);
      const double elapsed = core::to_seconds(sim_.now() - l.work_start);
      // No interval (a timer without failures' checkpoints): nothing was saved.
      const double cycle = cost.checkpoint_interval
                               ? cost.checkpoint_interval(static_cast<int>(s.placement.nodes.size())) + cost.checkpoint_s
                               : std::numeric_limits<double>::infinity();
      const double saved_until = elapsed > 0.0 ? std::floor(elapsed / cycle) * cycle : 0.0;
      const double kept = elapsed > 0.0 ? l.done * saved_until / elapsed : 0.0;
      s.iterations = std::min(l.remaining, static_cast<long long>(std::floor(kept + 1e-9)));
      s.restart_s = std::min(s.restart_s, core::to_seconds(sim_.now()) - s.start_s);
      s.lost_s = std::max(0.0, elapsed - static_cast<double>(s.iterations) * l.pace.iteration_s);
      s.train_s = std::max(0.0, elapsed) - s.lost_s;
      l.remaining -= s.iterations;
    } else {
      sim_.cancel(*l.requeue_event);
      l.requeue_event.reset();
      l.resize_to.reset();
    }
    const PreemptionCost cost = timer_.preemption(j);
    l.restart_owed_s = cost.detection_s + cost.restart_s;
    s.end_s = core::to_seconds(sim_.now());
    nodes_.give_back(s.placement);
    l.state = State::kQueued;
    queue_.push_back(j);
  }

  void record_usage() {
    const double t = core::to_seconds(sim_.now());
    const long long busy = static_cast<long long>(nodes_.shape().nodes) * nodes_.shape().gpus_per_node -
                           nodes_.free_gpus();
    const UsagePoint point{t, busy, static_cast<int>(queue_.size())};
    std::vector<UsagePoint>& u = result_.usage;
    if (!u.empty() && u.back().time_s == t) u.pop_back();
    if (!u.empty() && u.back().busy_gpus == busy && u.back().waiting_jobs == point.waiting_jobs) return;
    u.push_back(point);
  }

  const config::ClusterWorkload& w_;
  const JobTimer& timer_;
  core::Simulator sim_;
  NodeState nodes_;
  std::vector<Live> live_;
  std::vector<std::size_t> queue_;
  ScheduleResult result_;
  core::Rng rng_;                       // node failures
  std::map<int, core::Time> repair_at_;  // nodes down, and when they are back
  std::size_t finished_ = 0;
};

}  // namespace

ScheduleResult run_schedule(const config::ClusterWorkload& w, const JobTimer& timer) {
  return Scheduler(w, timer).run();
}

}  // namespace trainsim::cluster
