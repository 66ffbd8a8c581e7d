#include "scenario/mixed_cluster.h"

#include <algorithm>
#include <map>
#include <memory>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "hardware/profiled_compute_model.h"
#include "scenario/errors.h"
#include "workload/heterogeneous.h"
#include "workload/pipeline_schedule.h"

namespace trainsim::scenario {

namespace {

// pipeline_balance "speed": the decoder layers of each stage by its slowest GPU's speed.
void balance_pipeline(config::Scenario& s, const std::vector<const hw::ComputeModel*>& models) {
  workload::ParallelConfig& p = s.parallel;
  const std::string& file = s.source_file;
  if (p.pipeline <= 1 || p.pipeline_balance != workload::PipelineBalance::kSpeed || p.custom_split() ||
      p.has_virtual_stages())
    return;
  const std::vector<std::vector<int>> pools = workload::stage_pools(p, s.cluster);
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
  p.balanced_by_speed = true;
}

// batch_split "proportional": each replica's seconds per micro-batch (its slowest
// stage on the slowest GPU among that stage's ranks of the replica), the shares,
// and the replica that sets the pace, whose share and pools the simulation runs.
void split_batch(config::Scenario& s, const std::vector<const hw::ComputeModel*>& models) {
  workload::ParallelConfig& p = s.parallel;
  const workload::StageSeconds seconds(s.model, s.training, p);
  const std::vector<long long> layers = workload::virtual_stage_layers(s.model.num_layers, p);
  const std::vector<std::vector<std::vector<int>>> replicas = workload::replica_pools(p, s.cluster);
  std::map<std::vector<std::vector<int>>, std::pair<double, std::vector<int>>> kinds;  // per replica kind
  std::vector<double> per_microbatch;
  std::vector<std::vector<int>> paced_by;
  for (const std::vector<std::vector<int>>& stages : replicas) {
    auto [it, fresh] = kinds.try_emplace(stages);
    if (fresh) {
      const std::vector<int> pace = workload::pacing_pools(seconds, stages, layers, models);
      double slowest = 0.0;
      long long first = 0;
      for (std::size_t st = 0; st < stages.size(); ++st) {
        const workload::StageWork work{first, first + layers[st], st == 0, st + 1 == stages.size()};
        first = work.end;
        slowest = std::max(slowest, seconds(work, *models[static_cast<std::size_t>(pace[st])]));
      }
      it->second = {slowest, pace};
    }
    per_microbatch.push_back(it->second.first);
    paced_by.push_back(it->second.second);
  }
  const std::vector<long long> shares = workload::proportional_microbatches(
      s.training.global_batch_size / s.training.micro_batch_size, per_microbatch);
  std::size_t pacing = 0;
  for (std::size_t x = 1; x < shares.size(); ++x)
    if (static_cast<double>(shares[x]) * per_microbatch[x] >
        static_cast<double>(shares[pacing]) * per_microbatch[pacing])
      pacing = x;
  p.replica_microbatches = shares[pacing];
  p.replica_stage_pools = paced_by[pacing];
}

}  // namespace

void resolve_mixed_cluster(config::Scenario& s) {
  if (!s.cluster.heterogeneous()) return;
  workload::ParallelConfig& p = s.parallel;
  const std::string& file = s.source_file;
  if (p.mode != workload::TrainingMode::kSync)
    throw ScenarioError(file, "/parallelism/mode",
                        "\"sync\" on a mixed cluster (cluster.pools): the asynchronous modes' replay prices one "
                        "kind of worker; run each pool as its own scenario");
  if (p.batch_split == workload::BatchSplit::kProportional && p.has_virtual_stages())
    throw ScenarioError(file, "/parallelism/batch_split",
                        "\"even\" with virtual pipeline stages: the interleaved schedule needs a multiple of "
                        "pipeline_model_parallel_size micro-batches, which shares by speed need not be");
  const std::vector<std::unique_ptr<hw::ComputeModel>> owned =
      hw::pool_compute_models(s.cluster, s.calibration ? s.calibration->profile.get() : nullptr);
  std::vector<const hw::ComputeModel*> models;
  for (const auto& m : owned) models.push_back(m.get());
  balance_pipeline(s, models);
  if (p.batch_split == workload::BatchSplit::kProportional) {
    split_batch(s, models);
    return;
  }
  // Each stage's decoder layers (its model chunks together) on its slowest pool.
  const std::vector<long long> layers = workload::virtual_stage_layers(s.model.num_layers, p);
  std::vector<long long> stage_layers(static_cast<std::size_t>(p.pipeline), 0);
  for (std::size_t j = 0; j < layers.size(); ++j) stage_layers[j % stage_layers.size()] += layers[j];
  p.replica_stage_pools = workload::pacing_pools(workload::StageSeconds(s.model, s.training, p),
                                                 workload::stage_pools(p, s.cluster), stage_layers, models);
}


}  // namespace trainsim::scenario
