#pragma once
// GPU tests skip with a reason when this machine has no usable CUDA device.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <string>

namespace trainsim::testing {

// Empty when a device is usable, else why not.
inline std::string no_gpu_reason() {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    (void)cudaGetLastError();
    return std::string("no usable CUDA device: cudaGetDeviceCount returned ") + cudaGetErrorName(status);
  }
  if (count == 0) return "no CUDA device on this machine";
  return {};
}

}  // namespace trainsim::testing

#define TRAINSIM_REQUIRE_GPU()                                              \
  do {                                                                      \
    const std::string reason_ = ::trainsim::testing::no_gpu_reason();       \
    if (!reason_.empty()) GTEST_SKIP() << reason_;                          \
  } while (0)
