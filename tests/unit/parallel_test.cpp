// core::parallel_for and core::OnceCache: every index once, the lowest failing
// index's error whatever the thread count, no index started after a stop, and
// one computation per key.
#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "core/parallel.h"

namespace trainsim::core {
namespace {

TEST(ParallelFor, RunsEveryIndexOnceOnAnyNumberOfThreads) {
  for (int threads : {1, 2, 7}) {
    std::vector<int> seen(1000, 0);
    std::atomic<long long> sum{0};
    parallel_for(seen.size(), threads, [&](std::size_t i) {
      ++seen[i];
      sum += static_cast<long long>(i);
    });
    EXPECT_EQ(sum.load(), 999LL * 1000 / 2) << threads;  // n (n - 1) / 2
    for (int s : seen) ASSERT_EQ(s, 1);
  }
}

TEST(ParallelFor, RethrowsTheLowestFailingIndex) {
  for (int threads : {1, 4}) {
    try {
      parallel_for(500, threads, [](std::size_t i) {
        if (i == 300 || i == 301 || i == 450) throw std::runtime_error(std::to_string(i));
      });
      FAIL() << "no exception";
    } catch (const std::runtime_error& e) {
      EXPECT_STREQ(e.what(), "300") << threads;
    }
  }
}

TEST(ParallelFor, ReportsProgressEndingWithEveryIndexDone) {
  std::vector<std::size_t> reports;
  parallel_for(64, 3, [](std::size_t) {}, [&](std::size_t done) { reports.push_back(done); });
  ASSERT_FALSE(reports.empty());
  EXPECT_EQ(reports.back(), 64u);
  for (std::size_t i = 1; i < reports.size(); ++i) EXPECT_GE(reports[i], reports[i - 1]);
}

TEST(ParallelFor, StartsNoIndexOnceStopSaysSo) {
  // One thread takes indices in order: the stop after the 10th body leaves 0..9 run.
  std::vector<int> seen(100, 0);
  std::atomic<int> ran{0};
  parallel_for(
      seen.size(), 1,
      [&](std::size_t i) {
        ++seen[i];
        ++ran;
      },
      {}, [&] { return ran.load() >= 10; });
  EXPECT_EQ(ran.load(), 10);
  for (std::size_t i = 0; i < seen.size(); ++i) EXPECT_EQ(seen[i], i < 10 ? 1 : 0) << i;
  // Several threads: the running bodies end, at most one more per thread starts.
  for (int threads : {2, 4}) {
    std::atomic<int> n{0};
    parallel_for(
        1000, threads, [&](std::size_t) { ++n; }, {}, [&] { return n.load() >= 10; });
    EXPECT_GE(n.load(), 10) << threads;
    EXPECT_LE(n.load(), 10 + threads) << threads;
  }
}

TEST(OnceCache, ComputesEachKeyOnceAcrossThreads) {
  OnceCache<int, int> cache;
  std::atomic<int> computed{0};
  std::vector<std::jthread> pool;
  std::atomic<long long> total{0};
  for (int t = 0; t < 8; ++t)
    pool.emplace_back([&] {
      for (int k = 0; k < 100; ++k)
        total += cache.get(k % 10, [&] {
          ++computed;
          return (k % 10) * (k % 10);
        });
    });
  pool.clear();  // joins
  EXPECT_EQ(computed.load(), 10);
  // Each thread: 10 rounds of 0^2 + ... + 9^2 = 285.
  EXPECT_EQ(total.load(), 8LL * 10 * 285);
}

TEST(OnceCache, RethrowsTheComputationsErrorToEveryAsker) {
  OnceCache<int, int> cache;
  int computed = 0;
  const auto fail = [&]() -> int {
    ++computed;
    throw std::invalid_argument("no such state");
  };
  EXPECT_THROW((void)cache.get(1, fail), std::invalid_argument);
  EXPECT_THROW((void)cache.get(1, fail), std::invalid_argument);
  EXPECT_EQ(computed, 1);
}

}  // namespace
}  // namespace trainsim::core
