#include "core/simulator.h"

#include <limits>
#include <stdexcept>
#include <string>
#include <utility>

namespace trainsim::core {

EventId Simulator::schedule_at(Time time, Action action) {
  if (time < now_) {
    // An event in the past would make the clock run backwards; it is always a
    // model bug, so say which times were involved.
    throw std::invalid_argument("Simulator::schedule_at: time " + std::to_string(time) +
                                " ns is before now() = " + std::to_string(now_) + " ns");
  }
  return queue_.push(time, std::move(action));
}

EventId Simulator::schedule_after(Time delay, Action action) {
  if (delay < 0) {
    throw std::invalid_argument("Simulator::schedule_after: negative delay " +
                                std::to_string(delay) + " ns at now() = " + std::to_string(now_) +
                                " ns");
  }
  // now_ + delay would be signed overflow (undefined behaviour) past ~292 years.
  if (delay > std::numeric_limits<Time>::max() - now_) {
    throw std::overflow_error("Simulator::schedule_after: now() + " + std::to_string(delay) +
                              " ns overflows the 64-bit clock");
  }
  return queue_.push(now_ + delay, std::move(action));
}

std::uint64_t Simulator::run() {
  std::uint64_t count = 0;
  while (!queue_.empty()) {
    // Take the event out of the queue before running it: the action may
    // schedule or cancel events, which reshapes the heap.
    EventQueue::Event event = queue_.pop();
    now_ = event.time;
    event.action();
    ++executed_;
    ++count;
  }
  return count;
}

std::uint64_t Simulator::run_until(Time limit) {
  std::uint64_t count = 0;
  // Re-check next_time() every iteration: an action may schedule new events
  // at or before the limit, and those must run in this call too.
  while (!queue_.empty() && queue_.next_time() <= limit) {
    EventQueue::Event event = queue_.pop();
    now_ = event.time;
    event.action();
    ++executed_;
    ++count;
  }
  if (limit > now_) now_ = limit;
  return count;
}

}  // namespace trainsim::core
