#include "execution/async_replay.h"

#include <algorithm>
#include <stdexcept>

#include "core/simulator.h"

namespace trainsim::exec {

namespace {

struct Worker {
  int done = 0;                   // pushes completed
  long long version_pulled = 0;   // updates in the parameters of its last completed pull
  long long version_used = 0;     // updates in the parameters its current step computes with
  std::vector<core::Time> done_at;  // when each push completed
};

class Replay {
 public:
  explicit Replay(const AsyncPsInputs& in) : in_(in), workers_(static_cast<std::size_t>(in.workers)) {
    at_count_.assign(static_cast<std::size_t>(in.steps_per_worker) + 1, 0);
    at_count_[0] = in.workers;
    warmup_ = in.steps_per_worker / 4;
  }

  AsyncPsReport run() {
    for (int w = 0; w < in_.workers; ++w) start_step(w, 0);
    sim_.run();
    return report();
  }

 private:
  [[nodiscard]] core::Time step_of(int w) const {
    const double f = in_.slowdown.empty() ? 1.0 : in_.slowdown[static_cast<std::size_t>(w)];
    return static_cast<core::Time>(static_cast<double>(in_.step) * f + 0.5);
  }

  // Updates applied by time t: pushes finish at the server in arrival order.
  [[nodiscard]] long long applied_by(core::Time t) const {
    return std::upper_bound(applied_at_.begin(), applied_at_.end(), t) - applied_at_.begin();
  }

  void start_step(int w, core::Time t) {
    Worker& k = workers_[static_cast<std::size_t>(w)];
    k.version_used = k.version_pulled;
    sim_.schedule_at(t + step_of(w), [this, w] { step_done(w); });
  }

  void step_done(int w) {
    Worker& k = workers_[static_cast<std::size_t>(w)];
    // The server receives and applies pushes one at a time, in arrival order.
    const core::Time start = std::max(sim_.now(), receive_free_);
    const core::Time applied = start + in_.server_push;
    receive_free_ = applied;
    const long long staleness = static_cast<long long>(applied_at_.size()) - k.version_used;
    applied_at_.push_back(applied);
    if (k.done >= warmup_) ++staleness_[staleness];
    sim_.schedule_at(std::max(sim_.now() + in_.push, applied), [this, w] { push_done(w); });
  }

  void push_done(int w) {
    Worker& k = workers_[static_cast<std::size_t>(w)];
    --at_count_[static_cast<std::size_t>(k.done)];
    ++k.done;
    ++at_count_[static_cast<std::size_t>(k.done)];
    k.done_at.push_back(sim_.now());
    while (min_done_ < in_.steps_per_worker && at_count_[static_cast<std::size_t>(min_done_)] == 0) ++min_done_;
    // The pull: the server sends the parameters as they are when it starts.
    const core::Time start = std::max(sim_.now(), send_free_);
    const core::Time sent = start + in_.server_pull;
    send_free_ = sent;
    const long long version = applied_by(start);
    const core::Time pulled = std::max(sim_.now() + in_.pull, sent);
    const bool more = k.done < in_.steps_per_worker;
    if (in_.staleness_bound == 0) {
      sim_.schedule_at(pulled, [this, w, version, more] {
        workers_[static_cast<std::size_t>(w)].version_pulled = version;
        if (more) start_step(w, sim_.now());
      });
    } else {
      sim_.schedule_at(pulled, [this, w, version] {
        Worker& x = workers_[static_cast<std::size_t>(w)];
        x.version_pulled = std::max(x.version_pulled, version);
      });
      if (more) {
        waiters_.push_back(w);
      }
    }
    release_waiters();
  }

  // Stale synchronous parallel: a worker starts step c only while c - min_done <= k.
  void release_waiters() {
    std::vector<int> still;
    for (int w : waiters_) {
      Worker& k = workers_[static_cast<std::size_t>(w)];
      if (k.done - min_done_ <= in_.staleness_bound) {
        start_step(w, sim_.now());
      } else {
        still.push_back(w);
      }
    }
    waiters_ = std::move(still);
  }

  AsyncPsReport report() const {
    AsyncPsReport r;
    const int steady = in_.steps_per_worker - warmup_;
    double rate = 0.0;
    double step_sum = 0.0;
    for (const Worker& k : workers_) {
      const core::Time from = warmup_ == 0 ? 0 : k.done_at[static_cast<std::size_t>(warmup_ - 1)];
      const core::Time to = k.done_at.back();
      const double step = core::to_seconds(to - from) / steady;
      step_sum += step;
      rate += 1.0 / step;
    }
    r.step_time_s = step_sum / in_.workers;
    r.updates_per_s = rate;
    r.server_utilization = std::min(1.0, rate * core::to_seconds(in_.server_push));
    long long total = 0;
    double sum = 0.0;
    for (const auto& [staleness, count] : staleness_) {
      total += count;
      sum += static_cast<double>(staleness) * static_cast<double>(count);
      r.max_staleness = std::max(r.max_staleness, staleness);
    }
    r.staleness = staleness_;
    r.replayed_updates = static_cast<long long>(applied_at_.size());
    r.mean_staleness = total > 0 ? sum / static_cast<double>(total) : 0.0;
    return r;
  }

  const AsyncPsInputs& in_;
  std::vector<Worker> workers_;
  std::vector<int> at_count_;  // workers by pushes completed
  int min_done_ = 0;
  int warmup_ = 0;
  std::vector<int> waiters_;
  // The replay's clock and events: the core simulator's (time, then the order scheduled).
  core::Simulator sim_;
  core::Time receive_free_ = 0;
  core::Time send_free_ = 0;
  std::vector<core::Time> applied_at_;
  std::map<long long, long long> staleness_;
};

}  // namespace

AsyncPsReport replay_async_ps(const AsyncPsInputs& in) {
  if (in.workers < 1) throw std::invalid_argument("async_ps: at least one worker");
  if (in.staleness_bound < 0) throw std::invalid_argument("async_ps: negative staleness bound");
  if (in.steps_per_worker < 4) throw std::invalid_argument("async_ps: replay at least 4 steps per worker");
  if (in.step < 0 || in.push < 0 || in.pull < 0 || in.server_push < 0 || in.server_pull < 0)
    throw std::invalid_argument("async_ps: negative duration");
  if (!in.slowdown.empty() && static_cast<int>(in.slowdown.size()) != in.workers)
    throw std::invalid_argument("async_ps: one slowdown factor per worker");
  for (double f : in.slowdown)
    if (!(f > 0.0)) throw std::invalid_argument("async_ps: slowdown factors must be positive");
  return Replay(in).run();
}

}  // namespace trainsim::exec
