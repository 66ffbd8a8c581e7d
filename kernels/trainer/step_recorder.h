#pragma once
// CUDA-event instrumentation of one rank's training step: a start and an end event
// around the step on the compute stream, and an event pair around each group of launches
// (one op: "layer3.mlp_up", its kernel class, its timeline category). After the step has
// synchronized, the pairs give per-class GPU time (the sum of the op durations; gaps
// between launches count in no class) and the timeline spans, relative to the step start.
// Events come from a pool that grows to the largest step and is reused.
#include <cuda_runtime.h>

#include <array>
#include <cstddef>
#include <exception>
#include <string>
#include <vector>

#include "run_file.h"

namespace trainsim::trainer {

inline constexpr std::size_t kTimelineOnly = static_cast<std::size_t>(-1);  // spans counted in no class

class StepRecorder {
 public:
  explicit StepRecorder(int rank) : rank_(rank) {}
  ~StepRecorder();
  StepRecorder(const StepRecorder&) = delete;
  StepRecorder& operator=(const StepRecorder&) = delete;

  // false: begin/end/marker do nothing but return (evaluation passes).
  void set_enabled(bool on) { enabled_ = on; }
  [[nodiscard]] bool enabled() const { return enabled_; }

  void begin_step(cudaStream_t compute);
  void end_step(cudaStream_t compute);

  // Opens an op on `stream`; returns its id for end(). kclass: index in kKernelClasses or
  // kTimelineOnly. The device must be current.
  int begin(cudaStream_t stream, std::size_t kclass, const char* lane, const char* category, std::string name,
            int microbatch, int layer);
  void end(int id, cudaStream_t stream);
  // An event recorded on `stream` now (for cross-stream dependencies).
  cudaEvent_t marker(cudaStream_t stream);

  // After the step's work has completed:
  [[nodiscard]] double step_seconds() const;
  void add_class_seconds(std::array<double, kKernelClasses.size()>& sums) const;
  void append_spans(std::vector<TimelineSpan>& out, int iteration) const;

 private:
  cudaEvent_t take();
  struct Op {
    std::size_t kclass;
    const char* lane;
    const char* category;
    std::string name;
    int microbatch, layer;
    cudaEvent_t start, end;
  };
  int rank_;
  bool enabled_ = true;
  std::vector<cudaEvent_t> pool_;
  std::size_t used_ = 0;
  cudaEvent_t step_start_ = nullptr, step_end_ = nullptr;
  std::vector<Op> ops_;
};

// Opens an op in its constructor and closes it in its destructor (same stream).
class OpScope {
 public:
  OpScope(StepRecorder& rec, cudaStream_t stream, std::size_t kclass, const char* lane, const char* category,
          std::string name, int microbatch = -1, int layer = -1)
      : rec_(rec), stream_(stream), id_(rec.enabled() ? rec.begin(stream, kclass, lane, category, std::move(name),
                                                                   microbatch, layer)
                                                      : -1) {}
  // Closes the op, throwing CudaError if that fails. Not while an exception from inside the
  // scope unwinds (a failed launch): after a sticky CUDA error the event record fails too,
  // and a second exception would terminate the program with the event's message instead of
  // the launch's, which names the kernel (CUDA_LAUNCH_BLOCKING=1 runs rely on it).
  ~OpScope() noexcept(false) {
    if (id_ >= 0 && std::uncaught_exceptions() == exceptions_) rec_.end(id_, stream_);
  }
  OpScope(const OpScope&) = delete;
  OpScope& operator=(const OpScope&) = delete;

 private:
  StepRecorder& rec_;
  cudaStream_t stream_;
  int id_;
  int exceptions_ = std::uncaught_exceptions();
};

}  // namespace trainsim::trainer
