#include "workload/host_optimizer.h"

#include <string>
#include <utility>

namespace trainsim::workload {

namespace {

TaskId add_host_task(StageIteration& stage, std::string name, HostWork work, Stream stream, TaskDeps after) {
  TaskGraph& graph = stage.in.graph;
  Work w;
  w.name = std::move(name);
  w.host = work;
  Task t;
  t.work = graph.add_work(std::move(w));
  t.rank = stage.rank;
  t.stream = stream;
  t.category = Category::kOptimizer;
  t.role = Role::kOptimizerStep;
  t.iteration = stage.iteration;
  t.deps = std::move(after);
  return graph.add(std::move(t));
}

}  // namespace

// stage_1_and_2.py (DeepSpeed edaa722): .to(fp32) on the GPU, then a non-blocking
// copy into pinned host memory.
TaskDeps add_partition_copies(StageIteration& stage, const std::vector<GradientBucket>& buckets,
                              const std::vector<TaskId>& reduced, TaskId last_backward, double shard) {
  const IterationLayout& l = stage.in.layout;
  TaskDeps copies;
  if (reduced.empty() || reduced.size() != buckets.size()) {
    copies.push_back(add_host_task(stage, "optimizer.grads_to_host", {HostWork::Kind::kToHost, 4.0 * shard},
                                   Stream::kOffload, {last_backward}));
    return copies;
  }
  for (std::size_t i = 0; i < buckets.size(); ++i) {
    const double partition = buckets[i].params / static_cast<double>(buckets[i].expert ? l.expert_dp : l.dense_dp);
    copies.push_back(add_host_task(stage, "optimizer.grads_to_host.bucket" + std::to_string(i),
                                   {HostWork::Kind::kToHost, 4.0 * partition}, Stream::kOffload, {reduced[i]}));
  }
  return copies;
}

void add_host_update(StageIteration& stage, const TrainingConfig& training, double params, const TaskDeps& copied,
                     TaskDeps& deps) {
  const TaskDeps ready = deps;
  if (stage.in.parallel.offload_optimizer) {
    // ZeRO-Offload: DeepSpeedCPUAdam once every copy is in; 16-bit parameters
    // back (2 bytes each since DeepSpeed #7309).
    TaskDeps all = ready;
    all.append(copied);
    const TaskId update =
        add_host_task(stage, "optimizer.cpu_adam", {HostWork::Kind::kCpuAdam, params}, Stream::kHost, all);
    const double weight_bytes = training.precision == hw::Precision::kFp32 ? 4.0 : 2.0;
    deps.push_back(add_host_task(stage, "optimizer.params_to_device",
                                 {HostWork::Kind::kToDevice, weight_bytes * params}, Stream::kOffload, {update}));
    return;
  }
  // HybridDeviceOptimizer: main gradients in their type, fp32 weights back (cast on the GPU).
  const bool overlap = training.overlap_cpu_optimizer_d2h_h2d;
  const TaskId grads =
      add_host_task(stage, "optimizer.grads_to_host",
                    {HostWork::Kind::kToHost, params * stage.in.layout.grad_bytes}, Stream::kOffload, ready);
  const TaskId update = add_host_task(stage, "optimizer.cpu_adam", {HostWork::Kind::kCpuAdam, params},
                                      Stream::kHost, overlap ? ready : TaskDeps{grads});
  deps.push_back(add_host_task(stage, "optimizer.params_to_device", {HostWork::Kind::kToDevice, 4.0 * params},
                               Stream::kOffload, overlap ? TaskDeps{grads} : TaskDeps{update}));
  if (overlap) deps.push_back(update);
}

}  // namespace trainsim::workload
