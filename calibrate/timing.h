#pragma once
// Timing device work: warm-up, then each repetition between two CUDA events on the
// stream, the median over the repetitions (docs/calibration.md "How we time").
// Optionally the L2 cache is flushed before each repetition by writing a buffer
// twice its size, outside the timed region.
#include <cuda_runtime.h>

#include <cstddef>
#include <functional>

#include "timing_stats.h"
#include "trainsim/kernels/device_buffer.h"

namespace trainsim::calibrate {

struct TimingOptions {
  int warmup = 3;
  int min_repeats = 5;
  int max_repeats = 50;
  double target_seconds = 0.05;  // stop after this much timed work once min_repeats ran
  bool flush_l2 = false;
};

class Timer {
 public:
  explicit Timer(cudaStream_t stream);
  ~Timer();
  Timer(const Timer&) = delete;
  Timer& operator=(const Timer&) = delete;

  // `work(i)` enqueues repetition i on the stream (i counts warm-ups too, so
  // callers can rotate among input sets).
  Timing time(const std::function<void(int)>& work, const TimingOptions& options);

 private:
  cudaStream_t stream_;
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
  kernels::DeviceBuffer<unsigned char> flush_;
};

}  // namespace trainsim::calibrate
