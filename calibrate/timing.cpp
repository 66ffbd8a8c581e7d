#include "timing.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "trainsim/kernels/cuda_check.h"

namespace trainsim::calibrate {

Timer::Timer(cudaStream_t stream) : stream_(stream) {
  TRAINSIM_CUDA_CHECK(cudaEventCreate(&start_));
  TRAINSIM_CUDA_CHECK(cudaEventCreate(&stop_));
  int device = 0, l2 = 0;
  TRAINSIM_CUDA_CHECK(cudaGetDevice(&device));
  TRAINSIM_CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device));
  flush_ = kernels::DeviceBuffer<unsigned char>(2 * static_cast<std::size_t>(std::max(l2, 1 << 20)));
}

Timer::~Timer() {
  if (start_ != nullptr) cudaEventDestroy(start_);
  if (stop_ != nullptr) cudaEventDestroy(stop_);
}

Timing Timer::time(const std::function<void(int)>& work, const TimingOptions& o) {
  int i = 0;
  for (; i < o.warmup; ++i) work(i);
  TRAINSIM_CUDA_CHECK(cudaStreamSynchronize(stream_));
  std::vector<double> samples;
  double total = 0.0;
  while (static_cast<int>(samples.size()) < o.max_repeats &&
         (static_cast<int>(samples.size()) < o.min_repeats || total < o.target_seconds)) {
    if (o.flush_l2) TRAINSIM_CUDA_CHECK(cudaMemsetAsync(flush_.get(), i & 0xFF, flush_.bytes(), stream_));
    TRAINSIM_CUDA_CHECK(cudaEventRecord(start_, stream_));
    work(i++);
    TRAINSIM_CUDA_CHECK(cudaEventRecord(stop_, stream_));
    TRAINSIM_CUDA_CHECK(cudaEventSynchronize(stop_));
    float ms = 0.0F;
    TRAINSIM_CUDA_CHECK(cudaEventElapsedTime(&ms, start_, stop_));
    samples.push_back(static_cast<double>(ms) * 1e-3);
    total += samples.back();
  }
  return summarize(std::move(samples));
}

}  // namespace trainsim::calibrate
