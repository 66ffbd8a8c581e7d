#pragma once
// Asynchronous modes (docs/model.md, "Asynchronous training"): no gradient
// reduction between replicas. async_ps pushes each gradient bucket to the
// servers, 1/S to each, and pulls the parameters back; the graph holds one
// worker's traffic alone, the queueing of all workers at the servers is
// replayed by exec::replay_async_ps. Local SGD averages the parameters every
// sync_period steps.
#include <optional>
#include <vector>

#include "workload/gradient_buckets.h"
#include "workload/stage_iteration.h"
#include "workload/training_config.h"

namespace trainsim::workload {

class AsyncTraffic {
 public:
  AsyncTraffic(const IterationLayout& layout, const ParallelConfig& parallel, const TrainingConfig& training,
               long long num_gpus);

  // async_ps: the pushes of `buckets` after their gradients (or the whole
  // backward pass), then the pull of the stage's `params`; without staleness the
  // next iteration waits for the pull.
  void add_push_pull(StageIteration& stage, const std::vector<GradientBucket>& buckets, TaskId last_backward,
                     double params) const;
  // Local SGD: after every sync_period-th step the replicas average `params`
  // (the fp32 master copy in mixed precision); the next step waits for it.
  void add_average(StageIteration& stage, TaskId step, double params) const;

 private:
  // Every rank <-> server pair as one send_recv group: the pairs run at once;
  // none when the only server is this GPU's own.
  [[nodiscard]] std::optional<net::CommGroup> server_pairs(long long rank, bool to_servers) const;

  const IterationLayout& layout_;
  const ParallelConfig& parallel_;
  double master_bytes_;
  std::vector<long long> servers_;
  double share_;  // of each push and pull per server
};

}  // namespace trainsim::workload
