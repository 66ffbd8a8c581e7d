#include "step_recorder.h"

#include "trainsim/kernels/cuda_check.h"

namespace trainsim::trainer {

StepRecorder::~StepRecorder() {
  for (cudaEvent_t e : pool_) cudaEventDestroy(e);
}

cudaEvent_t StepRecorder::take() {
  if (used_ == pool_.size()) {
    cudaEvent_t e = nullptr;
    TRAINSIM_CUDA_CHECK(cudaEventCreate(&e));
    pool_.push_back(e);
  }
  return pool_[used_++];
}

void StepRecorder::begin_step(cudaStream_t compute) {
  used_ = 0;
  ops_.clear();
  step_start_ = take();
  step_end_ = take();
  TRAINSIM_CUDA_CHECK(cudaEventRecord(step_start_, compute));
}

void StepRecorder::end_step(cudaStream_t compute) { TRAINSIM_CUDA_CHECK(cudaEventRecord(step_end_, compute)); }

int StepRecorder::begin(cudaStream_t stream, std::size_t kclass, const char* lane, const char* category,
                        std::string name, int microbatch, int layer) {
  if (!enabled_) return -1;
  Op op{kclass, lane, category, std::move(name), microbatch, layer, take(), take()};
  TRAINSIM_CUDA_CHECK(cudaEventRecord(op.start, stream));
  ops_.push_back(std::move(op));
  return static_cast<int>(ops_.size() - 1);
}

void StepRecorder::end(int id, cudaStream_t stream) {
  if (id < 0) return;
  TRAINSIM_CUDA_CHECK(cudaEventRecord(ops_[static_cast<std::size_t>(id)].end, stream));
}

cudaEvent_t StepRecorder::marker(cudaStream_t stream) {
  cudaEvent_t e = take();
  TRAINSIM_CUDA_CHECK(cudaEventRecord(e, stream));
  return e;
}

namespace {
double seconds_between(cudaEvent_t a, cudaEvent_t b) {
  float ms = 0.0f;
  TRAINSIM_CUDA_CHECK(cudaEventElapsedTime(&ms, a, b));
  return static_cast<double>(ms) * 1e-3;
}
}  // namespace

double StepRecorder::step_seconds() const { return seconds_between(step_start_, step_end_); }

void StepRecorder::add_class_seconds(std::array<double, kKernelClasses.size()>& sums) const {
  for (const Op& op : ops_)
    if (op.kclass != kTimelineOnly) sums[op.kclass] += seconds_between(op.start, op.end);
}

void StepRecorder::append_spans(std::vector<TimelineSpan>& out, int iteration) const {
  for (const Op& op : ops_)
    out.push_back({rank_, op.lane, op.category, op.name, seconds_between(step_start_, op.start),
                   seconds_between(step_start_, op.end), iteration, op.microbatch, op.layer});
}

}  // namespace trainsim::trainer
