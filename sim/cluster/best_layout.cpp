#include "cluster/best_layout.h"

#include <fmt/format.h>
#include <optional>
#include <stdexcept>

#include "sweep/evaluate.h"
#include "sweep/space.h"

namespace trainsim::cluster {

void resolve_best_layouts(config::ClusterWorkload& w, int threads) {
  for (config::ClusterJob& job : w.jobs) {
    if (!job.layout_search) continue;
    const config::SweepSpec& spec = *job.layout_search;
    const sweep::Enumeration e = sweep::enumerate(spec);
    const std::vector<sweep::PointResult> results = sweep::evaluate_points(spec, e.candidates, threads);
    std::vector<std::optional<std::size_t>> best(spec.clusters.size());
    for (std::size_t i = 0; i < results.size(); ++i) {
      if (results[i].status != sweep::Status::kEvaluated) continue;
      auto& b = best[static_cast<std::size_t>(e.candidates[i].cluster)];
      if (!b || results[i].iteration_time_s < results[*b].iteration_time_s) b = i;
    }
    std::vector<config::ClusterJob::Size> sizes;
    for (std::size_t k = 0; k < spec.clusters.size(); ++k) {
      if (!best[k]) continue;
      const sweep::Point& p = e.candidates[*best[k]];
      config::Scenario s = sweep::scenario_of(spec, p);
      const std::string label = sweep::layout_label(p);
      const int gpus = static_cast<int>(s.cluster.num_gpus());
      sizes.push_back({gpus, std::move(s), fmt::format("{} on {} GPUs: {}", spec.name, gpus, label), label});
    }
    if (sizes.empty())
      throw std::invalid_argument(fmt::format("job \"{}\": no layout of its layout_space fits its GPUs' memory at any "
                                              "of its sizes",
                                              job.name));
    job.gpus = sizes.back().gpus;
    job.scenario = sizes.back().scenario;
    job.scenario_key = sizes.back().scenario_key;
    if (spec.clusters.size() > 1) job.elastic = std::move(sizes);
    else job.layout = sizes.back().layout;
  }
}

}  // namespace trainsim::cluster
