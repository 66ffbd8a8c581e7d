#pragma once
// An owning, typed device allocation (cudaMalloc / cudaFree); move-only.
#include <cuda_runtime.h>

#include <cstddef>
#include <utility>
#include <vector>

#include "trainsim/kernels/cuda_check.h"

namespace trainsim::kernels {

template <typename T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t count) : count_(count) {
    if (count_ > 0) TRAINSIM_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&ptr_), count_ * sizeof(T)));
  }
  ~DeviceBuffer() {
    if (ptr_ != nullptr) cudaFree(ptr_);
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& o) noexcept : ptr_(std::exchange(o.ptr_, nullptr)), count_(std::exchange(o.count_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    std::swap(ptr_, o.ptr_);
    std::swap(count_, o.count_);
    return *this;
  }

  [[nodiscard]] T* get() const { return ptr_; }
  [[nodiscard]] std::size_t size() const { return count_; }
  [[nodiscard]] std::size_t bytes() const { return count_ * sizeof(T); }

  void upload(const std::vector<T>& host) {
    if (host.size() != count_) throw CudaError("DeviceBuffer::upload: size mismatch");
    TRAINSIM_CUDA_CHECK(cudaMemcpy(ptr_, host.data(), bytes(), cudaMemcpyHostToDevice));
  }
  [[nodiscard]] std::vector<T> download() const {
    std::vector<T> host(count_);
    TRAINSIM_CUDA_CHECK(cudaMemcpy(host.data(), ptr_, bytes(), cudaMemcpyDeviceToHost));
    return host;
  }
  // Fill every byte with `byte` (poison before a kernel writes, to catch unwritten outputs).
  void fill_bytes(int byte) { TRAINSIM_CUDA_CHECK(cudaMemset(ptr_, byte, bytes())); }

 private:
  T* ptr_ = nullptr;
  std::size_t count_ = 0;
};

}  // namespace trainsim::kernels
