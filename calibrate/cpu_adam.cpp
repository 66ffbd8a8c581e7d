// trainsim-cpu-adam: measures the host CPUs' AdamW rate, the figure CPU optimizer
// offload runs at (cluster.host.cpu_adam_rate; docs/model.md, "CPU optimizer
// offload"). One process updates N fp32 parameters with their fp32 gradients and
// moments, as torch.optim.AdamW(fused=True) does on the CPU for Megatron-Core's
// HybridDeviceOptimizer: read p, g, m, v, write p, m, v (28 bytes a parameter), on
// every core, each thread on the part of the arrays it first touched. Prints the
// median over the repeats; --json writes {"cpu_adam_rate": ...}, which cluster.host
// takes as it is.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <exception>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "io/atomic_file.h"

namespace {

struct Arrays {
  std::unique_ptr<float[]> p, g, m, v;
};

// AdamW, PyTorch's formulation (torch/optim/adamw.py): decoupled weight decay,
// bias-corrected moments.
void adamw(Arrays& a, std::size_t begin, std::size_t end, int step) {
  constexpr float lr = 1e-4f, beta1 = 0.9f, beta2 = 0.95f, eps = 1e-8f, decay = 0.1f;
  const float c1 = 1.0f - std::pow(beta1, static_cast<float>(step));
  const float c2 = 1.0f - std::pow(beta2, static_cast<float>(step));
  const float step_size = lr / c1;
  const float root_c2 = std::sqrt(c2);
  float* p = a.p.get();
  const float* g = a.g.get();
  float* m = a.m.get();
  float* v = a.v.get();
  for (std::size_t i = begin; i < end; ++i) {
    p[i] *= 1.0f - lr * decay;
    m[i] = beta1 * m[i] + (1.0f - beta1) * g[i];
    v[i] = beta2 * v[i] + (1.0f - beta2) * g[i] * g[i];
    p[i] -= step_size * m[i] / (std::sqrt(v[i]) / root_c2 + eps);
  }
}

// Runs `work(begin, end)` on `threads` threads over [0, n), one contiguous part each.
template <class Work>
void parallel(std::size_t n, unsigned threads, Work work) {
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t)
    pool.emplace_back([=] { work(n * t / threads, n * (t + 1) / threads); });
  for (std::thread& th : pool) th.join();
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"trainsim-cpu-adam: the host CPUs' AdamW rate (parameters per second) for cluster.host.cpu_adam_rate"};
  double params = 2.5e8;
  unsigned threads = std::max(1U, std::thread::hardware_concurrency());
  int repeats = 5;
  std::string json;
  app.add_option("--params", params, "fp32 parameters updated (16 bytes each)")->check(CLI::Range(1e3, 1e11));
  app.add_option("--threads", threads, "threads (default: every hardware thread)")->check(CLI::Range(1U, 4096U));
  app.add_option("--repeats", repeats, "timed steps after one warm-up (the median is reported)")
      ->check(CLI::Range(1, 1000));
  app.add_option("--json", json, "also write {\"cpu_adam_rate\": ...} to this file");
  CLI11_PARSE(app, argc, argv);
  try {
    const auto n = static_cast<std::size_t>(params);
    // Four fp32 arrays: refuse what the machine cannot hold rather than be killed
    // while touching it.
    const double needed = 16.0 * static_cast<double>(n);
    const double physical = static_cast<double>(sysconf(_SC_PHYS_PAGES)) * static_cast<double>(sysconf(_SC_PAGESIZE));
    if (physical > 0.0 && needed > 0.8 * physical) {
      std::fprintf(stderr,
                   "trainsim-cpu-adam: --params %.3g needs %.1f GB (16 bytes a parameter) of the %.1f GB this machine "
                   "has; give fewer (the rate does not depend on it once the arrays are far larger than the caches)\n",
                   params, needed / 1e9, physical / 1e9);
      return 2;
    }
    Arrays a;
    a.p.reset(new float[n]);
    a.g.reset(new float[n]);
    a.m.reset(new float[n]);
    a.v.reset(new float[n]);
    // First touch by the thread that will update each part (its NUMA node's memory).
    parallel(n, threads, [&](std::size_t b, std::size_t e) {
      for (std::size_t i = b; i < e; ++i) {
        a.p[i] = 0.01f * static_cast<float>(i % 97);
        a.g[i] = 1e-3f * static_cast<float>(i % 89) - 0.04f;
        a.m[i] = 0.0f;
        a.v[i] = 0.0f;
      }
    });
    std::vector<double> seconds;
    for (int step = 1; step <= repeats + 1; ++step) {
      const auto start = std::chrono::steady_clock::now();
      parallel(n, threads, [&](std::size_t b, std::size_t e) { adamw(a, b, e, step); });
      const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
      if (step > 1) seconds.push_back(took.count());
    }
    std::sort(seconds.begin(), seconds.end());
    const double median = seconds[seconds.size() / 2];
    const double rate = static_cast<double>(n) / median;
    std::printf("%zu parameters on %u threads: median %.4f s of %d steps (min %.4f, max %.4f)\n", n, threads, median,
                repeats, seconds.front(), seconds.back());
    std::printf("cpu_adam_rate %.4g parameters/s (%.1f GB/s at 28 bytes a parameter)\n", rate, rate * 28.0 / 1e9);
    if (!json.empty()) {
      // What cluster.host takes as it is (the details are printed above).
      nlohmann::ordered_json out;
      out["cpu_adam_rate"] = rate;
      trainsim::io::write_atomically(json, [&](std::ostream& os) { os << out.dump(1) << '\n'; });
      std::printf("wrote %s\n", json.c_str());
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "trainsim-cpu-adam: %s\n", e.what());
    return 1;
  }
  return 0;
}
