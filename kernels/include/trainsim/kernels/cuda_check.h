#pragma once
// Error checking for CUDA runtime, cuBLAS(Lt) and NCCL calls: a failed call throws
// trainsim::kernels::CudaError naming the call, file:line and the library's message.
// Helpers never exit(); the caller decides (the harness keeps what it measured).
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace trainsim::kernels {

class CudaError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

[[noreturn]] inline void throw_cuda_error(const char* what, const std::string& message, const char* file, int line) {
  throw CudaError(std::string(what) + " failed at " + file + ":" + std::to_string(line) + ": " + message);
}

inline void check_cuda(cudaError_t status, const char* what, const char* file, int line) {
  if (status != cudaSuccess)
    throw_cuda_error(what, std::string(cudaGetErrorName(status)) + " (" + cudaGetErrorString(status) + ")", file,
                     line);
}

}  // namespace trainsim::kernels

// CUDA_CHECK(cudaMalloc(...)); after a launch: CUDA_CHECK(cudaGetLastError()).
#define TRAINSIM_CUDA_CHECK(call) ::trainsim::kernels::check_cuda((call), #call, __FILE__, __LINE__)
