#pragma once
// The simulator's two pieces of shared-memory parallelism (the sweep's points,
// the failure replay's Monte Carlo trials and the iteration simulations its
// trials ask for), written once.
#include <cstddef>
#include <exception>
#include <functional>
#include <future>
#include <map>
#include <mutex>
#include <utility>

namespace trainsim::core {

// Runs body(i) for every i in [0, n) on `threads` threads, each taking the next
// index (one thread: in order, on the calling thread). After a body throws, no
// further index is started; once the running ones end, the exception of the
// lowest index that threw is rethrown. Indices are taken in order, so every index
// below it ran: which error a caller sees never depends on the thread count.
// `progress(done)`, when given, runs on the calling thread about ten times a
// second and once at the end. `stop()`, when given, is asked before each index
// is taken: once it returns true no further index starts, the running ones end,
// and parallel_for returns. Returns how many indices ran: indices are taken in
// order and every one taken ends, so they are 0..count-1.
std::size_t parallel_for(std::size_t n, int threads, const std::function<void(std::size_t)>& body,
                  const std::function<void(std::size_t)>& progress = {},
                  const std::function<bool()>& stop = {});

// The threads a caller asking for "every core" gets: `threads` when positive,
// else the hardware's thread count (at least 1).
int threads_or_every_core(int threads);

// Values computed once per key and shared by threads: the first thread to ask for
// a key computes it outside the lock, so the others go on (or compute other keys)
// meanwhile; a thread asking for a key being computed waits for that answer. An
// exception is kept and rethrown to every asker. The computation must be a pure
// function of the key, so which thread computes first never changes an answer.
template <class Key, class Value>
class OnceCache {
 public:
  // The value of `key`, from compute() on the first ask.
  template <class Compute>
  Value get(const Key& key, Compute&& compute) {
    std::promise<Value> mine;
    std::shared_future<Value> answer;
    bool ask = false;
    {
      const std::lock_guard lock(mutex_);
      auto it = values_.find(key);
      if (it == values_.end()) {
        it = values_.emplace(key, mine.get_future().share()).first;
        ask = true;
      }
      answer = it->second;
    }
    if (ask) {
      try {
        mine.set_value(std::forward<Compute>(compute)());
      } catch (...) {
        mine.set_exception(std::current_exception());
      }
    }
    return answer.get();
  }

 private:
  std::mutex mutex_;
  std::map<Key, std::shared_future<Value>> values_;
};

}  // namespace trainsim::core
