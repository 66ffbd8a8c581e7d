#include "workload/activation_offload.h"

#include <stdexcept>
#include <string>
#include <utility>

namespace trainsim::workload {

ActivationOffload::ActivationOffload(TaskGraph& graph, std::vector<double> layer_bytes, int offloaded)
    : graph_(graph), bytes_(std::move(layer_bytes)), offloaded_(offloaded) {
  if (offloaded_ < 1 || offloaded_ >= layers())
    throw std::invalid_argument("ActivationOffload: offload 1 to L - 1 of a stage's L layers");
  for (long long l = 0; l < offloaded_; ++l) {
    const double bytes = bytes_[static_cast<std::size_t>(l)];
    Work out;
    out.name = "offload.layer" + std::to_string(l);
    out.host = HostWork{HostWork::Kind::kToHost, bytes};
    to_host_.push_back(graph_.add_work(std::move(out)));
    Work back;
    back.name = "reload.layer" + std::to_string(l);
    back.host = HostWork{HostWork::Kind::kToDevice, bytes};
    to_device_.push_back(graph_.add_work(std::move(back)));
  }
}

void ActivationOffload::before_forward(StageEmitter& emit, long long layer) const {
  const long long released = layer - (layers() - offloaded_);
  if (released < 0) return;
  emit.wait_for(offload_.at({emit.iteration(), emit.microbatch(), released}));
}

void ActivationOffload::after_forward(StageEmitter& emit, long long layer) {
  if (layer >= offloaded_) return;
  offload_[{emit.iteration(), emit.microbatch(), layer}] = add_copy(emit, layer, true);
}

void ActivationOffload::before_backward(StageEmitter& emit, long long layer) {
  const long long reloaded = layer - (layers() - 1 - offloaded_);
  if (reloaded >= 0 && reloaded < offloaded_)
    reload_[{emit.iteration(), emit.microbatch(), reloaded}] = add_copy(emit, reloaded, false);
  if (layer < offloaded_) emit.wait_for(reload_.at({emit.iteration(), emit.microbatch(), layer}));
}

TaskId ActivationOffload::add_copy(StageEmitter& emit, long long layer, bool to_host) {
  Task t;
  t.work = (to_host ? to_host_ : to_device_)[static_cast<std::size_t>(layer)];
  t.rank = emit.rank();
  t.stream = Stream::kOffload;
  t.category = to_host ? Category::kOffload : Category::kReload;
  t.role = to_host ? Role::kActivationOffload : Role::kActivationReload;
  t.iteration = emit.iteration();
  t.microbatch = emit.microbatch();
  t.layer = static_cast<std::int32_t>(layer);
  // The layer's tensors (forward), or the buffers the main stream allocates at the
  // backward's hook (reload), exist once the compute before this point is done.
  if (const auto last = emit.last_task()) t.deps.push_back(*last);
  return graph_.add(std::move(t));
}

}  // namespace trainsim::workload
