#include "sweep/ranking.h"

#include <algorithm>
#include <array>
#include <limits>
#include <utility>

#include "sweep/plan_economics.h"

namespace trainsim::sweep {

std::optional<double> objective_of(const PointResult& r, const config::ClusterOption& c, config::Objective o) {
  if (o == config::Objective::kCost) return plan_economics(c, r).cost();
  return r.reliability ? std::optional<double>(r.reliability->time_to_train_p50_s) : r.time_to_train_s;
}

std::vector<std::size_t> rank(std::span<const PointResult> results, std::span<const Point> points,
                              const config::SweepSpec& spec) {
  const config::Objective objective = spec.objective;
  std::vector<std::optional<double>> value(results.size());
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < results.size(); ++i) {
    if (results[i].status != Status::kEvaluated) continue;
    value[i] = objective_of(results[i], spec.clusters[static_cast<std::size_t>(points[i].cluster)], objective);
    if (value[i]) order.push_back(i);
  }
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    // Replayed points first (by their p50), then the rest (failure-free).
    const bool ra = results[a].reliability.has_value();
    const bool rb = results[b].reliability.has_value();
    if (ra != rb) return ra;
    const double va = *value[a];
    const double vb = *value[b];
    if (va != vb) return va < vb;
    return results[a].id < results[b].id;
  });
  return order;
}

std::vector<std::size_t> pareto_front(std::span<const TimeCost> points) {
  std::vector<std::size_t> order(points.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const TimeCost& x = points[a];
    const TimeCost& y = points[b];
    if (x.time != y.time) return x.time < y.time;
    if (x.cost != y.cost) return x.cost < y.cost;
    return x.id < y.id;
  });
  // By time, then cost: a point is on the front when it is cheaper than every
  // point before it, or equal in both to the last one kept.
  std::vector<std::size_t> front;
  double best = std::numeric_limits<double>::infinity();
  for (std::size_t i : order) {
    const TimeCost& p = points[i];
    const bool same_as_last =
        !front.empty() && points[front.back()].time == p.time && points[front.back()].cost == p.cost;
    if (p.cost < best || same_as_last) {
      front.push_back(i);
      best = std::min(best, p.cost);
    }
  }
  return front;
}

std::vector<std::size_t> pareto_front(std::span<const PointResult> results) {
  std::vector<TimeCost> points;
  std::vector<std::size_t> index;
  for (std::size_t i = 0; i < results.size(); ++i) {
    const PointResult& r = results[i];
    if (r.status != Status::kEvaluated || !r.time_to_train_s || !r.cost_usd) continue;
    points.push_back({*r.time_to_train_s, *r.cost_usd, r.id});
    index.push_back(i);
  }
  std::vector<std::size_t> front = pareto_front(std::span<const TimeCost>(points));
  for (std::size_t& i : front) i = index[i];
  return front;
}

Bottleneck bottleneck(const PointResult& r) {
  const report::Breakdown& b = r.breakdown_s;
  // The recomputed forward passes run on the compute stream, inside b.compute.
  const std::array<std::pair<const char*, double>, 5> parts{{
      {"compute", b.compute - r.recompute_s + b.optimizer},
      {"memory", r.recompute_s},
      {"tp_communication", r.exposed_tp_s},
      {"dp_communication", r.exposed_dp_s},
      {"bubble", b.pipeline_bubble + b.other + r.exposed_pp_s},
  }};
  Bottleneck out;
  for (const auto& [name, seconds] : parts)
    if (out.name.empty() || seconds > out.seconds) out = {name, seconds, 0.0};
  out.share = r.iteration_time_s > 0 ? out.seconds / r.iteration_time_s : 0.0;
  return out;
}

}  // namespace trainsim::sweep
