#include "workload/async_traffic.h"

#include <algorithm>
#include <string>
#include <utility>

#include "workload/layout.h"

namespace trainsim::workload {

AsyncTraffic::AsyncTraffic(const IterationLayout& layout, const ParallelConfig& parallel,
                           const TrainingConfig& training, long long num_gpus)
    : layout_(layout),
      parallel_(parallel),
      master_bytes_(activation_element_bytes(training) < 4.0 ? 4.0 : layout.weight_bytes),
      servers_(parallel.mode == TrainingMode::kAsyncPs
                   ? parameter_server_ranks(parallel.num_servers,
                                            parallel.server_placement == ServerPlacement::kDedicated, num_gpus,
                                            layout.gpus_per_domain)
                   : std::vector<long long>{}),
      share_(1.0 / static_cast<double>(std::max(1, parallel.num_servers))) {}

std::optional<net::CommGroup> AsyncTraffic::server_pairs(long long rank, bool to_servers) const {
  Members pairs;
  for (long long server : servers_)
    if (server != rank)
      pairs.push_back(to_servers ? std::vector<long long>{rank, server} : std::vector<long long>{server, rank});
  if (pairs.empty()) return std::nullopt;
  const net::CommGroup shape = members_shape(pairs.front(), layout_.gpus_per_domain);
  return explicit_group(shape, std::move(pairs));
}

void AsyncTraffic::add_push_pull(StageIteration& stage, const std::vector<GradientBucket>& buckets,
                                 TaskId last_backward, double params) const {
  TaskGraph& graph = stage.in.graph;
  std::vector<TaskId> pushes;
  if (const auto to = server_pairs(stage.rank, true))
    for (std::size_t i = 0; i < buckets.size(); ++i) {
      Task t = data_parallel_task(
          graph, "ps_push.bucket" + std::to_string(i), Role::kPsPush,
          net::Collective{net::CollectiveKind::kSendRecv, buckets[i].params * layout_.grad_bytes * share_, *to},
          stage.rank, stage.iteration);
      t.deps = {parallel_.overlap_grad_reduce ? buckets[i].ready_after : last_backward};
      pushes.push_back(graph.add(std::move(t)));
    }
  const auto from = server_pairs(stage.rank, false);
  if (!from) return;
  Task t = data_parallel_task(
      graph, "ps_pull", Role::kPsPull,
      net::Collective{net::CollectiveKind::kSendRecv, params * layout_.weight_bytes * share_, *from}, stage.rank,
      stage.iteration);
  t.category = Category::kRecv;
  t.deps = pushes;
  t.deps.push_back(last_backward);
  const TaskId pull = graph.add(std::move(t));
  if (parallel_.staleness == 0) stage.carry.pending_gathers.push_back(pull);
}

void AsyncTraffic::add_average(StageIteration& stage, TaskId step, double params) const {
  if (parallel_.mode != TrainingMode::kLocalSgd || layout_.dense_dp <= 1 ||
      (stage.iteration + 1) % parallel_.sync_period != 0)
    return;
  Task t = data_parallel_task(
      stage.in.graph, "param_average", Role::kParameterAverage,
      net::Collective{net::CollectiveKind::kAllReduce, params * master_bytes_, stage.groups.data}, stage.rank,
      stage.iteration);
  t.deps = {step};
  stage.carry.pending_gathers.push_back(stage.in.graph.add(std::move(t)));
}

}  // namespace trainsim::workload
