#pragma once
// What every measurement descriptor gets from the driver: the stream, the timer,
// the profile being written, and the stop flag Ctrl-C sets.
#include <cuda_runtime.h>

#include <atomic>
#include <cstdio>

#include "profile_writer.h"
#include "timing.h"

namespace trainsim::calibrate {

struct BenchContext {
  cudaStream_t stream = nullptr;
  Timer* timer = nullptr;
  ProfileWriter* profile = nullptr;
  const std::atomic<bool>* stop = nullptr;
  std::FILE* log = stdout;
  [[nodiscard]] bool stopped() const { return stop != nullptr && stop->load(); }
};

}  // namespace trainsim::calibrate
