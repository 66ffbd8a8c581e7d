#pragma once
// What every measurement descriptor gets from the driver: the stream, the timer,
// the profile being written, the measurement runner (journal, --resume, errors
// recorded: measurement_runner.h), and the stop flag Ctrl-C sets.
#include <cuda_runtime.h>

#include <atomic>
#include <cstdio>
#include <functional>
#include <string>

#include "measurement_runner.h"
#include "profile_writer.h"
#include "timing.h"

namespace trainsim::calibrate {

struct BenchContext {
  cudaStream_t stream = nullptr;
  Timer* timer = nullptr;
  ProfileWriter* profile = nullptr;
  const std::atomic<bool>* stop = nullptr;
  std::FILE* log = stdout;
  MeasurementRunner* runner = nullptr;
  [[nodiscard]] bool stopped() const { return stop != nullptr && stop->load(); }

  // One measurement named `key`: skipped when --resume's journal has it; its
  // row for `section` from measure(), or its CUDA/NCCL error recorded and the run
  // goes on, unless the error left the device unusable (then it ends the run).
  MeasurementRunner::Outcome measure(const std::string& section, const std::string& key,
                                     const std::function<nlohmann::json()>& measure_row) const {
    return runner->run(section, key, measure_row, device_broken);
  }
  MeasurementRunner::Outcome measure_value(const std::string& name, const std::string& key,
                                           const std::function<nlohmann::json()>& measure_value) const {
    return runner->run_value(name, key, measure_value, device_broken);
  }
  // A sticky error (an illegal access, a launch failure) fails every later call.
  // A non-sticky one (out of memory) is cleared first, so that the next
  // measurement's launch checks do not report it again.
  static bool device_broken() {
    (void)cudaGetLastError();
    return cudaDeviceSynchronize() != cudaSuccess;
  }
};

}  // namespace trainsim::calibrate
