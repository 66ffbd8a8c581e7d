#include "memory_bench.h"

#include <algorithm>

#include "device_fill.h"
#include "trainsim/kernels/cuda_check.h"
#include "trainsim/kernels/device_buffer.h"

namespace trainsim::calibrate {

namespace {

struct PinnedHost {
  explicit PinnedHost(std::size_t bytes) { TRAINSIM_CUDA_CHECK(cudaMallocHost(&ptr, bytes)); }
  ~PinnedHost() { cudaFreeHost(ptr); }
  PinnedHost(const PinnedHost&) = delete;
  PinnedHost& operator=(const PinnedHost&) = delete;
  void* ptr = nullptr;
};

}  // namespace

void bench_copies(BenchContext& ctx, double max_bytes) {
  const auto top = static_cast<std::size_t>(max_bytes);
  kernels::DeviceBuffer<unsigned char> src(top), dst(top);
  fill_random(src.get(), top / 4, kernels::GemmDtype::kFp32, 3u, ctx.stream);
  const std::size_t host_top = std::min<std::size_t>(top, std::size_t{1} << 30);
  PinnedHost host(host_top);

  std::fprintf(ctx.log, "# copies: median of repeats; device_to_device counts bytes read + written\n");
  std::fprintf(ctx.log, "#             kind          bytes    time(us)      GB/s\n");
  struct Kind {
    const char* name;
    cudaMemcpyKind kind;
    std::size_t top;
  };
  const Kind kinds[] = {{"device_to_device", cudaMemcpyDeviceToDevice, top},
                        {"host_to_device", cudaMemcpyHostToDevice, host_top},
                        {"device_to_host", cudaMemcpyDeviceToHost, host_top}};
  for (const Kind& k : kinds) {
    for (std::size_t bytes = std::size_t{1} << 20; bytes <= k.top; bytes *= 4) {
      if (ctx.stopped()) return;
      void* to = k.kind == cudaMemcpyDeviceToHost ? host.ptr : dst.get();
      const void* from = k.kind == cudaMemcpyHostToDevice ? host.ptr : src.get();
      ctx.measure("copies", std::string("copies ") + k.name + " " + std::to_string(bytes), [&] {
        const Timing t = ctx.timer->time(
            [&](int) { TRAINSIM_CUDA_CHECK(cudaMemcpyAsync(to, from, bytes, k.kind, ctx.stream)); }, TimingOptions{});
        const double moved = static_cast<double>(bytes) * (k.kind == cudaMemcpyDeviceToDevice ? 2.0 : 1.0);
        const double gbps = moved / t.median_s / 1e9;
        std::fprintf(ctx.log, "%18s %14zu %11.2f %9.1f\n", k.name, bytes, t.median_s * 1e6, gbps);
        return nlohmann::json{{"kind", k.name},          {"bytes", moved},        {"seconds", t.median_s},
                              {"gbps", gbps},            {"repeats", t.repeats},  {"distribution_s", distribution_json(t)}};
      });
    }
  }
  ctx.profile->flush();
}

void bench_launch_overhead(BenchContext& ctx) {
  constexpr int kLaunches = 1000;
  TimingOptions o;
  o.min_repeats = 11;
  o.max_repeats = 11;
  ctx.measure_value("launch_overhead_s", "launch overhead", [&] {
    const Timing t = ctx.timer->time(
        [&](int) {
          for (int i = 0; i < kLaunches; ++i) launch_empty(ctx.stream);
        },
        o);
    const double per_launch = t.median_s / kLaunches;
    std::fprintf(ctx.log, "# launch overhead: %.2f us per empty kernel (%d back-to-back launches, median of %d)\n",
                 per_launch * 1e6, kLaunches, t.repeats);
    return nlohmann::json(per_launch);
  });
  ctx.profile->flush();
}

}  // namespace trainsim::calibrate
