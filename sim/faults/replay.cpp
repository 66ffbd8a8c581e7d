#include "faults/replay.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <mutex>
#include <stdexcept>

#include <fmt/format.h>

#include "core/parallel.h"
#include "core/rng.h"
#include "core/simulator.h"

namespace trainsim::faults {

namespace {

constexpr core::Time kNever = std::numeric_limits<core::Time>::max() / 4;
constexpr std::size_t kMaxEvents = 20000;
// Sub-streams of a trial's generator: one per failure process, then these, so
// that enabling stragglers does not move the failure times (and so on).
constexpr std::uint64_t kStragglerStream = 1000;
constexpr std::uint64_t kDegradeStream = 1001;

core::Time ns(double seconds) {
  // Beyond ~30 years a draw can never matter to one training run.
  return seconds > 1e9 ? kNever : core::from_seconds(seconds);
}

long long ceil_div(long long a, long long b) { return (a + b - 1) / b; }

class Trial {
 public:
  Trial(const ReplayConfig& c, const IterationOracle& oracle, std::uint64_t seed, std::uint64_t trial, bool record)
      : c_(c), oracle_(oracle), rng_(core::Rng(seed).split(trial)), record_(record) {
    for (std::size_t i = 0; i < c_.processes.size(); ++i) {
      streams_.push_back(rng_.split(i));
      next_fail_.push_back(draw_failure(i, 0));
    }
    if (c_.straggler_fraction > 0.0) {
      core::Rng g = rng_.split(kStragglerStream);
      for (long long r = 0; r < c_.num_gpus; ++r)
        if (g.uniform() < c_.straggler_fraction) state_.slow_ranks.emplace_back(r, c_.straggler_slowdown);
    }
    degrade_rng_ = rng_.split(kDegradeStream);
    next_degrade_ = c_.degraded_mean_s > 0.0 ? ns(degrade_rng_.exponential(c_.degraded_mean_s)) : kNever;
    next_maint_ = c_.maintenance_interval > 0 ? c_.maintenance_interval : kNever;
    spares_ = c_.hot_spares;
    r_.stragglers = static_cast<long long>(state_.slow_ranks.size());
  }

  TrialResult run();

 private:
  // The job is one process on the core event simulator: each of its steps
  // accounts for an activity (training, a stop, a recovery) that starts now and
  // schedules what follows at the activity's end, so at most one event is
  // pending and the simulator's clock is the job's.
  using Next = core::Action;
  [[nodiscard]] core::Time now() const { return sim_.now(); }
  void at(core::Time t, Next next) { sim_.schedule_at(t, std::move(next)); }

  // The top of the job's loop at now(): what the state calls for next.
  void step();
  // After a training segment: done, a checkpoint due, or the next step.
  void after_training();
  void check_horizon(core::Time t) const;

  core::Time draw_failure(std::size_t i, core::Time from);

  core::Time next_failure() const;
  std::size_t failing_process() const;

  // Degradation episodes and repairs: the next time one of them changes the state.
  core::Time next_background() const;

  void update_background(core::Time now);

  // An asynchronous checkpoint becomes durable once its storage write ends.
  void settle(core::Time now);

  StatePerformance performance();

  // Trains n iterations for `duration` from now(), then `next`.
  void iterate(long long n, core::Time duration, const StatePerformance& p, Next next);

  // Stops until `until`, then `next`; or until a failure comes first, which is
  // then handled instead (the job resumes at the step after its recovery).
  void stop_until(core::Time until, core::Time& counter, const char* category, const char* name, Next next);

  // A checkpoint: waits for the previous write (asynchronous mode), writes,
  // and lets repaired nodes rejoin a shrunk job; then the next step.
  void checkpoint();
  void write_checkpoint();
  void checkpoint_written();

  // A node goes out of service at `tf`; returns when the job can restart at the earliest.
  core::Time take_node_out(core::Time tf);

  void failure(core::Time tf);

  void maintenance();
  void maintenance_window();

  void add_event(const char* category, std::string name, core::Time start, core::Time end,
                 std::vector<Phase> phases = {}, bool concurrent = false);

  static void add_phase(std::vector<Phase>& phases, const char* category, std::string name, core::Time start,
                        core::Time end);

  const ReplayConfig& c_;
  const IterationOracle& oracle_;
  core::Rng rng_;
  bool record_;
  std::vector<core::Rng> streams_;
  std::vector<core::Time> next_fail_;
  core::Rng degrade_rng_{0};
  core::Time next_degrade_ = kNever;
  core::Time degrade_until_ = 0;
  core::Time next_maint_ = kNever;
  std::vector<core::Time> repairs_;
  long long spares_ = -1;
  int rejoin_ready_ = 0;

  ClusterState state_;
  ClusterState perf_state_;
  StatePerformance perf_;
  bool have_perf_ = false;

  TrialResult r_;
  core::Simulator sim_;
  core::Time horizon_ = kNever;
  long long tokens_ = 0;
  long long durable_tokens_ = 0;
  core::Time since_ckpt_ = 0;
  core::Time run_at_durable_ = 0;
  bool pending_ = false;
  core::Time pending_at_ = 0;
  long long pending_tokens_ = 0;
  core::Time pending_run_ = 0;
};

TrialResult Trial::run() {
  const StatePerformance healthy = oracle_(ClusterState{});
  // Default: 100 x the failure-free time (at least a day), in floating point
  // so that long runs cannot overflow.
  const double ideal = static_cast<double>(ceil_div(c_.train_tokens, healthy.tokens_per_iteration)) *
                       static_cast<double>(healthy.iteration_time);
  horizon_ = c_.horizon > 0 ? c_.horizon
                            : static_cast<core::Time>(std::clamp(100.0 * ideal,
                                                                 86400.0 * static_cast<double>(core::kSecond),
                                                                 static_cast<double>(kNever)));
  at(0, [this] { step(); });
  sim_.run();
  return std::move(r_);
}

void Trial::step() {
  const core::Time t = now();
  check_horizon(t);
  settle(t);
  update_background(t);
  if (next_maint_ <= t) {
    maintenance();
    return;
  }
  const core::Time nf = next_failure();
  if (nf <= t) {
    failure(nf);
    return;
  }
  const StatePerformance p = performance();
  const core::Time it = p.iteration_time;
  const long long n_done = ceil_div(c_.train_tokens - tokens_, p.tokens_per_iteration);
  const long long n_ckpt = c_.checkpoint_interval > 0
                               ? std::max<long long>(1, ceil_div(c_.checkpoint_interval - since_ckpt_, it))
                               : std::numeric_limits<long long>::max();
  const core::Time next_ext = std::min({nf, next_maint_, next_background()});
  const long long n_ext = (next_ext - t) / it;
  long long n = std::min({n_done, n_ckpt, n_ext});
  if (n == 0) {
    if (nf < t + it) {  // a failure inside the next iteration: its partial work runs and is lost
      iterate(0, nf - t, p, [this, nf] { failure(nf); });
      return;
    }
    n = 1;  // another event inside the next iteration: it applies from the iteration after
  }
  iterate(n, n * it, p, [this] { after_training(); });
}

void Trial::after_training() {
  if (tokens_ >= c_.train_tokens) {
    r_.wall = now();  // trained: no event is left, the simulator stops
    return;
  }
  if (c_.checkpoint_interval > 0 && since_ckpt_ >= c_.checkpoint_interval) {
    checkpoint();
    return;
  }
  step();
}

void Trial::check_horizon(core::Time t) const {
  if (t > horizon_)
    throw std::runtime_error(fmt::format(
        "the run does not finish within {:.0f} days of simulated time: failures come faster than the job "
        "recovers (mean time to interrupt vs detection + restart + reload + checkpoint interval, or a repair "
        "wait longer than the time between failures)",
        core::to_seconds(horizon_) / 86400.0));
}

core::Time Trial::draw_failure(std::size_t i, core::Time from) {
  const double mean = c_.processes[i].mean_s;
  double x = 0.0;
  if (c_.distribution == Distribution::kWeibull) {
    // Weibull of mean `mean`: scale = mean / Gamma(1 + 1/k).
    x = streams_[i].weibull(mean / std::tgamma(1.0 + 1.0 / c_.weibull_shape), c_.weibull_shape);
  } else {
    x = streams_[i].exponential(mean);
  }
  const core::Time d = ns(x);
  return d >= kNever - from ? kNever : from + d;
}

core::Time Trial::next_failure() const {
  core::Time m = kNever;
  for (core::Time f : next_fail_) m = std::min(m, f);
  return m;
}

std::size_t Trial::failing_process() const {
  return static_cast<std::size_t>(std::min_element(next_fail_.begin(), next_fail_.end()) - next_fail_.begin());
}

core::Time Trial::next_background() const {
  core::Time m = next_degrade_;
  if (state_.degraded_link) m = std::min(m, degrade_until_);
  if (!repairs_.empty()) m = std::min(m, *std::min_element(repairs_.begin(), repairs_.end()));
  return m;
}

void Trial::update_background(core::Time now) {
  if (state_.degraded_link && degrade_until_ <= now) state_.degraded_link = false;
  while (next_degrade_ <= now) {
    const core::Time end = next_degrade_ + c_.degraded_duration;
    add_event("degraded", "degraded link", next_degrade_, end, {}, true);
    degrade_until_ = std::max(state_.degraded_link ? degrade_until_ : 0, end);
    state_.degraded_link = degrade_until_ > now;
    next_degrade_ = next_degrade_ + ns(degrade_rng_.exponential(c_.degraded_mean_s));
  }
  // Repaired nodes: back to the spare pool, or ready to rejoin a shrunk job.
  for (auto it = repairs_.begin(); it != repairs_.end();) {
    if (*it > now) {
      ++it;
      continue;
    }
    if (c_.policy == RecoveryPolicy::kElasticShrink)
      ++rejoin_ready_;
    else if (spares_ >= 0)
      ++spares_;
    it = repairs_.erase(it);
  }
}

void Trial::settle(core::Time now) {
  if (pending_ && pending_at_ <= now) {
    pending_ = false;
    durable_tokens_ = pending_tokens_;
    run_at_durable_ = pending_run_;
  }
}

StatePerformance Trial::performance() {
  if (!have_perf_ || perf_state_ != state_) {
    perf_ = oracle_(state_);
    if (perf_.iteration_time <= 0 || perf_.tokens_per_iteration <= 0)
      throw std::logic_error("iteration oracle: a state needs a positive iteration time and tokens per iteration");
    perf_state_ = state_;
    have_perf_ = true;
  }
  return perf_;
}

void Trial::iterate(long long n, core::Time duration, const StatePerformance& p, Next next) {
  add_event("train", "training", now(), now() + duration);
  r_.running += duration;
  r_.iterations += n;
  tokens_ += n * p.tokens_per_iteration;
  since_ckpt_ += duration;
  if (state_.degraded_link) r_.degraded += duration;
  if (state_.lost_replicas > 0) r_.shrunk += duration;
  at(now() + duration, std::move(next));
}

void Trial::stop_until(core::Time until, core::Time& counter, const char* category, const char* name, Next next) {
  const core::Time nf = next_failure();
  if (nf < until) {
    add_event(category, name, now(), nf);
    counter += nf - now();
    at(nf, [this, nf] { failure(nf); });
    return;
  }
  add_event(category, name, now(), until);
  counter += until - now();
  at(until, std::move(next));
}

void Trial::checkpoint() {
  // Asynchronous: the previous write must end before the next copy reuses the buffers.
  if (pending_ && pending_at_ > now()) {
    stop_until(pending_at_, r_.checkpointing, "checkpoint", "waiting for the previous checkpoint write",
               [this] { write_checkpoint(); });
    return;
  }
  write_checkpoint();
}

void Trial::write_checkpoint() {
  settle(now());
  stop_until(now() + c_.checkpoint_blocking, r_.checkpointing, "checkpoint",
             c_.checkpoint_background > 0 ? "checkpoint copy to host memory" : "checkpoint write",
             [this] { checkpoint_written(); });
}

void Trial::checkpoint_written() {
  ++r_.checkpoints;
  since_ckpt_ = 0;
  if (c_.checkpoint_background > 0) {
    pending_ = true;
    pending_at_ = now() + c_.checkpoint_background;
    pending_tokens_ = tokens_;
    pending_run_ = r_.running;
    add_event("checkpoint", "checkpoint write to storage (background)", now(), pending_at_, {}, true);
  } else {
    durable_tokens_ = tokens_;
    run_at_durable_ = r_.running;
  }
  // Elastic shrink: repaired nodes rejoin after a checkpoint (a restart
  // without reload: the new replicas take the state from their peers).
  // A failure during that restart leaves them ready for the next checkpoint.
  if (state_.lost_replicas > 0 && rejoin_ready_ > 0) {
    stop_until(now() + c_.restart, r_.down, "restart", "repaired nodes rejoin", [this] {
      state_.lost_replicas -= std::min(state_.lost_replicas, rejoin_ready_ * c_.replicas_per_node_loss);
      rejoin_ready_ = 0;
      step();
    });
    return;
  }
  step();
}

core::Time Trial::take_node_out(core::Time tf) {
  switch (c_.policy) {
    case RecoveryPolicy::kWaitForRepair:
      return tf + c_.repair;
    case RecoveryPolicy::kElasticShrink:
      if (state_.lost_replicas + c_.replicas_per_node_loss < c_.data_parallel) {
        state_.lost_replicas += c_.replicas_per_node_loss;
        repairs_.push_back(tf + c_.repair);
        return tf;
      }
      return tf + c_.repair;  // no replica would be left: wait for the repair
    case RecoveryPolicy::kHotSpare:
      if (spares_ < 0) return tf;  // as many spares as needed
      if (spares_ > 0) {
        --spares_;
        repairs_.push_back(tf + c_.repair);
        return tf;
      }
      {
        // No spare free: the first repaired node takes the failed one's place.
        auto first = std::min_element(repairs_.begin(), repairs_.end());
        const core::Time ready = first == repairs_.end() ? tf + c_.repair : *first;
        if (first != repairs_.end()) repairs_.erase(first);
        repairs_.push_back(tf + c_.repair);
        return std::max(tf, ready);
      }
  }
  return tf;
}

void Trial::failure(core::Time tf) {
  // Progress since the last durable checkpoint is lost; a write still in
  // flight never lands.
  settle(tf);
  pending_ = false;
  core::Time resume = tf;
  const std::size_t first = failing_process();
  int during_recovery = -1;
  for (;;) {
    const std::size_t i = failing_process();
    const core::Time at = next_fail_[i];
    check_horizon(at);  // a recovery that failures keep starting again never ends
    ++r_.interruptions;
    ++during_recovery;
    if (record_ && r_.events.size() < kMaxEvents) r_.failures.push_back({at, c_.processes[i].component});
    next_fail_[i] = draw_failure(i, at);
    const core::Time ready = take_node_out(at);
    resume = std::max(at + c_.detection, ready) + c_.restart + c_.reload;
    if (next_failure() >= resume) break;  // else a failure during the recovery starts it again
  }
  r_.lost_work += r_.running - run_at_durable_;
  run_at_durable_ = r_.running;
  tokens_ = durable_tokens_;
  since_ckpt_ = 0;
  add_event("failure", fmt::format("{} failure (detection)", to_string(c_.processes[first].component)), tf,
            tf + c_.detection);
  // The recovery that completed: down until its restart (a repair wait, or
  // recoveries started again by more failures), the restart, the reload.
  const core::Time reload_at = resume - c_.reload;
  const core::Time restart_at = reload_at - c_.restart;
  std::vector<Phase> phases;
  if (record_) {
    add_phase(phases, "down",
              during_recovery > 0 ? fmt::format("down: recovery started again by {} more failures", during_recovery)
                                  : std::string("down: waiting for a repaired node"),
              tf + c_.detection, restart_at);
    add_phase(phases, "restart", "restart", restart_at, reload_at);
    add_phase(phases, "reload", "checkpoint reload", reload_at, resume);
  }
  add_event("restart",
            during_recovery > 0
                ? fmt::format("restart and checkpoint reload ({} more failures during recovery)", during_recovery)
                : std::string("restart and checkpoint reload"),
            tf + c_.detection, resume, std::move(phases));
  r_.down += resume - tf;
  at(resume, [this] { step(); });
}

void Trial::maintenance() {
  // Planned: a final checkpoint (the whole write, even in async mode), down
  // for the window, then a restart with reload. Failures inside the window
  // are repaired with it and not counted.
  const core::Time write = c_.checkpoint_blocking + c_.checkpoint_background;
  stop_until(now() + write, r_.checkpointing, "checkpoint", "checkpoint before maintenance",
             [this] { maintenance_window(); });
}

void Trial::maintenance_window() {
  pending_ = false;
  durable_tokens_ = tokens_;
  run_at_durable_ = r_.running;
  since_ckpt_ = 0;
  ++r_.maintenance_stops;
  const core::Time t = now();
  const core::Time window_end = std::max(t, next_maint_ + c_.maintenance_duration);
  const core::Time resume = window_end + c_.restart + c_.reload;
  std::vector<Phase> phases;
  if (record_) {
    add_phase(phases, "maintenance", "planned maintenance", t, window_end);
    add_phase(phases, "restart", "restart", window_end, window_end + c_.restart);
    add_phase(phases, "reload", "checkpoint reload", window_end + c_.restart, resume);
  }
  add_event("maintenance", "planned maintenance, restart and reload", t, resume, std::move(phases));
  r_.down += resume - t;
  for (std::size_t i = 0; i < next_fail_.size(); ++i)
    if (next_fail_[i] < resume) next_fail_[i] = draw_failure(i, resume);
  while (next_maint_ <= resume) next_maint_ += c_.maintenance_interval;
  at(resume, [this] { step(); });
}

void Trial::add_event(const char* category, std::string name, core::Time start, core::Time end,
               std::vector<Phase> phases, bool concurrent) {
  if (!record_ || end <= start) return;
  if (phases.empty() && !r_.events.empty() && r_.events.back().category == category &&
      r_.events.back().end == start && r_.events.back().name == name && r_.events.back().phases.empty()) {
    r_.events.back().end = end;
    return;
  }
  if (r_.events.size() >= kMaxEvents) return;
  r_.events.push_back({category, std::move(name), start, end, std::move(phases), concurrent});
}

void Trial::add_phase(std::vector<Phase>& phases, const char* category, std::string name, core::Time start,
                      core::Time end) {
  if (end > start) phases.push_back({category, std::move(name), start, end});
}


Percentiles percentiles(std::vector<double> v) {
  Percentiles p;
  if (v.empty()) return p;
  std::sort(v.begin(), v.end());
  // Nearest rank: the smallest value with at least q of the values at or below it.
  auto at = [&](double q) {
    const auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(v.size())));
    return v[std::clamp<std::size_t>(rank, 1, v.size()) - 1];
  };
  p.p10 = at(0.10);
  p.p50 = at(0.50);
  p.p90 = at(0.90);
  double sum = 0.0;
  for (double x : v) sum += x;
  p.mean = sum / static_cast<double>(v.size());
  double sq = 0.0;
  for (double x : v) sq += (x - p.mean) * (x - p.mean);
  p.stddev = v.size() > 1 ? std::sqrt(sq / static_cast<double>(v.size() - 1)) : 0.0;
  return p;
}

}  // namespace

TrialResult replay_trial(const ReplayConfig& c, const IterationOracle& oracle, std::uint64_t seed,
                         std::uint64_t trial, bool record) {
  if (c.train_tokens <= 0) throw std::invalid_argument("replay: train_tokens must be positive");
  TrialResult r = Trial(c, oracle, seed, trial, record).run();
  const double wall_s = core::to_seconds(r.wall);
  const double running_s = core::to_seconds(r.running);
  r.energy_kwh = hw::energy_kwh(c.power, c.pue, running_s, wall_s);
  r.cost_usd = wall_s / 3600.0 * static_cast<double>(c.allocated_gpus) * c.price_per_gpu_hour;
  return r;
}

MonteCarloResult monte_carlo(const ReplayConfig& c, const IterationOracle& oracle, std::uint64_t seed, int trials,
                             int threads, const std::function<void(double)>& progress,
                             const std::function<bool()>& stop) {
  if (trials < 1) throw std::invalid_argument("monte_carlo: trials must be at least 1");
  // The oracle's answers, shared by the trials: one call per distinct state.
  core::OnceCache<ClusterState, StatePerformance> cache;
  const IterationOracle cached = [&](const ClusterState& s) { return cache.get(s, [&] { return oracle(s); }); };
  const int workers = std::clamp(core::threads_or_every_core(threads), 1, trials);

  MonteCarloResult out;
  out.trials = trials;
  out.trials_requested = trials;
  out.threads = workers;
  out.per_trial.resize(static_cast<std::size_t>(trials));
  // Progress once per finished trial (the GUI's bar moves by trials), one call at a time.
  std::mutex report_mutex;
  int done = 0;
  const auto trial = [&](std::size_t k) {
    const auto i = static_cast<int>(k);
    out.per_trial[k] = replay_trial(c, cached, seed, static_cast<std::uint64_t>(i), i == 0);
    if (progress) {
      const std::lock_guard lock(report_mutex);
      progress(static_cast<double>(++done) / trials);
    }
  };
  const auto ran = static_cast<int>(core::parallel_for(static_cast<std::size_t>(trials), workers, trial, {}, stop));
  if (ran < trials) {
    // Stopped: the trials that ran are 0..K-1 (taken in order, each one finished).
    trials = ran;
    out.trials = trials;
    out.per_trial.resize(static_cast<std::size_t>(trials));
    if (trials == 0) return out;
  }

  // Aggregates in trial order, so the thread count never changes a bit of them.
  const StatePerformance healthy = cached(ClusterState{});
  out.ideal_time_s = core::to_seconds(ceil_div(c.train_tokens, healthy.tokens_per_iteration) * healthy.iteration_time);
  std::vector<double> wall;
  double interruptions = 0.0, interruptions_sq = 0.0;
  const double n = trials;
  for (const TrialResult& r : out.per_trial) {
    const double w = core::to_seconds(r.wall);
    wall.push_back(w);
    const auto k = static_cast<double>(r.interruptions);
    interruptions += k;
    interruptions_sq += k * k;
    out.expected_checkpoints += static_cast<double>(r.checkpoints) / n;
    out.lost_gpu_hours += static_cast<double>(c.allocated_gpus) * (w - out.ideal_time_s) / 3600.0 / n;
    out.lost_work_s += core::to_seconds(r.lost_work) / n;
    out.checkpointing_s += core::to_seconds(r.checkpointing) / n;
    out.down_s += core::to_seconds(r.down) / n;
    out.degraded_s += core::to_seconds(r.degraded) / n;
    out.shrunk_s += core::to_seconds(r.shrunk) / n;
    out.stragglers += static_cast<double>(r.stragglers) / n;
    out.cost_usd += r.cost_usd / n;
    out.energy_kwh += r.energy_kwh / n;
  }
  out.expected_interruptions = interruptions / n;
  const double var = trials > 1 ? (interruptions_sq - n * out.expected_interruptions * out.expected_interruptions) / (n - 1)
                                : 0.0;
  out.interruptions_standard_error = std::sqrt(std::max(0.0, var) / n);
  out.time_to_train_s = percentiles(std::move(wall));
  out.goodput = out.ideal_time_s / out.time_to_train_s.mean;
  return out;
}

}  // namespace trainsim::faults
