#include "sweep/reliability.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "execution/full_run.h"
#include "execution/simulate.h"
#include "sweep/ranking.h"

namespace trainsim::sweep {

double nearest_rank(std::vector<double> v, double q) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(v.size())));
  return v[std::clamp<std::size_t>(rank, 1, v.size()) - 1];
}

std::vector<std::size_t> replay_selection(const config::SweepSpec& spec, std::span<const Point> points,
                                          std::span<const PointResult> results) {
  std::vector<std::size_t> out;
  if (!spec.failures_modeled()) return out;
  // rank() orders by the failure-free objective here: nothing is replayed yet.
  std::vector<int> taken(spec.clusters.size(), 0);
  for (std::size_t i : rank(results, points, spec)) {
    int& n = taken[static_cast<std::size_t>(points[i].cluster)];
    if (n < spec.replay_top_k) {
      out.push_back(i);
      ++n;
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

namespace {

PointReliability reliability_of(const exec::FullRunReport& rep) {
  const faults::MonteCarloResult& mc = rep.monte_carlo;
  PointReliability r;
  r.trials = mc.trials;
  r.time_to_train_p50_s = mc.time_to_train_s.p50;
  r.time_to_train_p90_s = mc.time_to_train_s.p90;
  r.time_to_train_mean_s = mc.time_to_train_s.mean;
  r.goodput = mc.goodput;
  r.expected_interruptions = mc.expected_interruptions;
  r.checkpoint_interval_s = rep.checkpoint_interval_s;
  r.energy_kwh = mc.energy_kwh;
  std::vector<double> costs;
  costs.reserve(mc.per_trial.size());
  for (const faults::TrialResult& t : mc.per_trial) costs.push_back(t.cost_usd);
  r.cost_p50_usd = nearest_rank(std::move(costs), 0.50);
  return r;
}

}  // namespace

void replay_points(const config::SweepSpec& spec, std::span<const Point> points, std::span<PointResult> results,
                   std::span<const std::size_t> selection, int threads,
                   const std::function<void(std::size_t)>& progress, const std::function<void(std::size_t)>& finished,
                   const std::function<bool()>& stop) {
  std::size_t done = 0;
  for (std::size_t i : selection) {
    if (stop && stop()) return;
    PointResult& r = results[i];
    config::Scenario s = scenario_of(spec, points[i]);
    s.failures->threads = std::max(1, threads);
    try {
      const exec::SimulationOutput healthy = exec::simulate(s);
      r.reliability = reliability_of(exec::simulate_full_run(s, healthy));
      if (!spec.clusters[static_cast<std::size_t>(points[i].cluster)].base.cluster.price_per_gpu_hour)
        r.reliability->cost_p50_usd.reset();
    } catch (const std::invalid_argument& e) {
      r.replay_error = e.what();  // a layout the recovery policy cannot shrink
    } catch (const std::runtime_error& e) {
      r.replay_error = e.what();  // a trial past the replay's horizon
    }
    if (finished) finished(i);
    if (progress) progress(++done);
  }
}

}  // namespace trainsim::sweep
