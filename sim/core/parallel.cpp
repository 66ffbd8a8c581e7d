#include "core/parallel.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <thread>
#include <vector>

namespace trainsim::core {

namespace {

constexpr auto kProgressPeriod = std::chrono::milliseconds(100);

}  // namespace

int threads_or_every_core(int threads) {
  return threads > 0 ? threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

std::size_t parallel_for(std::size_t n, int threads, const std::function<void(std::size_t)>& body,
                         const std::function<void(std::size_t)>& progress, const std::function<bool()>& stop) {
  std::atomic<std::size_t> next{0};
  std::atomic<std::size_t> done{0};
  std::mutex mutex;
  std::condition_variable finished;
  std::size_t failed = n;  // the lowest index that threw
  std::exception_ptr failure;
  // The next index, or n once stop() says so (every later take then sees n too).
  const auto take = [&]() -> std::size_t {
    if (stop && stop()) {
      next = n;
      return n;
    }
    return next++;
  };
  std::atomic<std::size_t> ended{0};  // workers that have left their loop
  const auto work = [&] {
    for (std::size_t i = take(); i < n; i = take()) {
      try {
        body(i);
      } catch (...) {
        const std::lock_guard lock(mutex);
        if (i < failed) {
          failed = i;
          failure = std::current_exception();
        }
        next = n;
      }
      ++done;
    }
    ++ended;
    const std::lock_guard lock(mutex);
    finished.notify_all();
  };
  const std::size_t workers = std::clamp<std::size_t>(static_cast<std::size_t>(std::max(threads, 1)), 1, std::max<std::size_t>(n, 1));
  if (workers == 1) {
    auto last = std::chrono::steady_clock::now();
    for (std::size_t i = take(); i < n; i = take()) {
      body(i);  // in order: the first exception is the lowest index's
      ++done;
      if (progress && std::chrono::steady_clock::now() - last >= kProgressPeriod) {
        progress(done.load());
        last = std::chrono::steady_clock::now();
      }
    }
  } else {
    std::vector<std::jthread> pool;
    pool.reserve(workers);
    for (std::size_t t = 0; t < workers; ++t) pool.emplace_back(work);
    std::unique_lock lock(mutex);
    while (done.load() < n && !failure && ended.load() < workers) {
      finished.wait_for(lock, kProgressPeriod);
      if (progress) {
        lock.unlock();
        progress(done.load());
        lock.lock();
      }
    }
  }
  if (failure) std::rethrow_exception(failure);
  if (progress) progress(done.load());
  return done.load();
}

}  // namespace trainsim::core
