#include "scenario/mixed_cluster.h"

#include <memory>
#include <vector>

#include <fmt/format.h>

#include "hardware/profiled_compute_model.h"
#include "scenario/errors.h"
#include "workload/heterogeneous.h"
#include "workload/pipeline_schedule.h"

namespace trainsim::scenario {

void resolve_mixed_cluster(config::Scenario& s) {
  if (!s.cluster.heterogeneous()) return;
  workload::ParallelConfig& p = s.parallel;
  const std::string& file = s.source_file;
  if (p.mode != workload::TrainingMode::kSync)
    throw ScenarioError(file, "/parallelism/mode",
                        "\"sync\" on a mixed cluster (cluster.pools): the asynchronous modes' replay prices one "
                        "kind of worker; run each pool as its own scenario");
  if (p.pipeline <= 1 || p.pipeline_balance != workload::PipelineBalance::kSpeed || p.custom_split() ||
      p.has_virtual_stages())
    return;
  const std::vector<std::vector<int>> pools = workload::stage_pools(p, s.cluster);
  const std::vector<std::unique_ptr<hw::ComputeModel>> owned =
      hw::pool_compute_models(s.cluster, s.calibration ? s.calibration->profile.get() : nullptr);
  std::vector<const hw::ComputeModel*> models;
  for (const auto& m : owned) models.push_back(m.get());
  const workload::StageSeconds seconds(s.model, s.training, p);
  const std::vector<int> pace =
      workload::pacing_pools(seconds, pools, workload::virtual_stage_layers(s.model.num_layers, p), models);
  bool alike = true;
  for (const int k : pace) alike = alike && k == pace.front();
  if (alike) return;  // every stage paced by one GPU type: the even split
  if (s.model.num_layers < p.pipeline)
    throw ScenarioError(file, "/parallelism/pipeline_model_parallel_size",
                        fmt::format("at most num_layers ({}) stages to balance by speed", s.model.num_layers));
  p.layout_stage_layers = workload::speed_balanced_layers(seconds, s.model.num_layers, pace, models);
}

}  // namespace trainsim::scenario
