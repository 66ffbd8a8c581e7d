#pragma once
// CPU activation offload as Megatron-Core runs it through Transformer Engine's
// offload context (cpu_offloading, cpu_offloading_num_layers; docs/model.md, "CPU
// activation offload"): the saved activations of the first N of a stage's L
// decoder layers go to host memory on one copy stream, each once its layer's
// forward is done; layer i's are released when the forward reaches layer L-N+i,
// which waits for their copy; their reload starts when the backward reaches layer
// L-1-N+i, and layer i's backward waits for it.
#include <map>
#include <tuple>
#include <vector>

#include "workload/stage_emitter.h"
#include "workload/task_graph.h"

namespace trainsim::workload {

class ActivationOffload {
 public:
  // `layer_bytes[l]`: decoder layer l's saved activations on one GPU for one
  // micro-batch, for every layer of the stage; the first `offloaded` go to the host
  // (1 <= offloaded < layers).
  ActivationOffload(TaskGraph& graph, std::vector<double> layer_bytes, int offloaded);

  // The emitter's next tasks are layer `layer`'s forward: it waits for the copy
  // of the layer released there.
  void before_forward(StageEmitter& emit, long long layer) const;
  // Layer `layer`'s forward was emitted last: its copy to the host.
  void after_forward(StageEmitter& emit, long long layer);
  // The emitter's next tasks are layer `layer`'s backward: the reload that starts
  // there, and the wait for this layer's own.
  void before_backward(StageEmitter& emit, long long layer);

 private:
  [[nodiscard]] long long layers() const { return static_cast<long long>(bytes_.size()); }
  TaskId add_copy(StageEmitter& emit, long long layer, bool to_host);

  TaskGraph& graph_;
  std::vector<double> bytes_;
  long long offloaded_;
  std::vector<WorkId> to_host_, to_device_;  // per offloaded layer, registered once
  // By (iteration, micro-batch, layer).
  std::map<std::tuple<int, int, long long>, TaskId> offload_, reload_;
};

}  // namespace trainsim::workload
