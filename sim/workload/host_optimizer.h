#pragma once
// CPU optimizer offload's tasks (docs/model.md, "CPU optimizer offload"): the
// copies between a GPU and its host's memory and the host CPUs' Adam update,
// on the offload and host streams, each a part of the optimizer step.
#include <vector>

#include "workload/gradient_buckets.h"
#include "workload/stage_iteration.h"
#include "workload/task_graph.h"
#include "workload/training_config.h"

namespace trainsim::workload {

// DeepSpeed's ZeRO-Offload, stages 1 and 2: as each bucket is reduced (`reduced`,
// one task per bucket), the rank's partition of it goes to the host in fp32;
// without reductions (one rank) the whole `shard` after `last_backward`. Returns
// the copies.
TaskDeps add_partition_copies(StageIteration& stage, const std::vector<GradientBucket>& buckets,
                              const std::vector<TaskId>& reduced, TaskId last_backward, double shard);

// The host's part of the step over `params` parameters, ready after `deps`
// (and, for ZeRO-Offload, after `copied`); adds to `deps` what the GPU's own
// step then waits for. ZeRO-Offload (`stage.in.parallel.offload_optimizer`):
// DeepSpeedCPUAdam, then the 16-bit parameters back. Megatron-Core's
// HybridDeviceOptimizer: the main gradients to the host, AdamW there, the fp32
// weights back, one after another or (overlap_cpu_optimizer_d2h_h2d) the copies
// beside the update.
void add_host_update(StageIteration& stage, const TrainingConfig& training, double params, const TaskDeps& copied,
                     TaskDeps& deps);

}  // namespace trainsim::workload
