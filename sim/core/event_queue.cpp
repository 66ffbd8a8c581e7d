#include "core/event_queue.h"

#include <algorithm>
#include <stdexcept>
#include <utility>

namespace trainsim::core {

namespace {

// std::push_heap/pop_heap build a max-heap with respect to the comparator, so
// "a comes after b" puts the earliest (time, id) at the front. Comparing the id
// second makes the order total, which is what makes ties run in push order
// (the heap itself is not stable).
template <typename E>
struct RunsLater {
  bool operator()(const E& a, const E& b) const noexcept {
    if (a.time != b.time) return a.time > b.time;
    return a.id > b.id;
  }
};

}  // namespace

EventId EventQueue::push(Time time, Action action) {
  if (!action) {
    // Running an empty std::function throws std::bad_function_call far from
    // the place that scheduled it; reject it here where the caller is known.
    throw std::invalid_argument("EventQueue::push: empty action");
  }
  const EventId id = next_id_;
  const auto index = static_cast<std::size_t>(id);
  // Grow the bookkeeping first and only commit next_id_/live_ once everything
  // that can throw (allocation) has succeeded: on bad_alloc the queue is left
  // unchanged apart from a spare slot, and the id is reused by the next push.
  // Both vectors always hold at least next_id_ entries, so one push_back is
  // enough (and cheaper than resize, which showed up in profiles).
  if (cancelled_.size() == index) cancelled_.push_back(false);
  if (done_.size() == index) done_.push_back(false);
  if (free_slots_.empty()) {
    actions_.emplace_back();
    free_slots_.reserve(actions_.size());
    free_slots_.push_back(static_cast<std::uint32_t>(actions_.size() - 1));
  }
  heap_.push_back(Entry{time, id, free_slots_.back()});
  free_slots_.pop_back();
  actions_[heap_.back().slot] = std::move(action);
  std::push_heap(heap_.begin(), heap_.end(), RunsLater<Entry>{});
  ++next_id_;
  ++live_;
  return id;
}

bool EventQueue::cancel(EventId id) {
  if (id >= next_id_) return false;  // never issued
  const auto index = static_cast<std::size_t>(id);
  if (done_[index]) return false;  // already ran or already cancelled
  // Lazy deletion: removing an arbitrary element from a binary heap needs its
  // position, which std::push_heap does not track. Marking it and discarding it
  // when it reaches the top keeps cancel O(1) (ns-3 and SimPy do the same).
  cancelled_[index] = true;
  done_[index] = true;
  --live_;
  // Restore the invariant that the top of the heap is live, so the const
  // next_time() never has to look past a cancelled event.
  drop_cancelled_top();
  return true;
}

bool EventQueue::empty() const { return live_ == 0; }

std::size_t EventQueue::size() const { return live_; }

Time EventQueue::next_time() const {
  if (empty()) throw std::logic_error("EventQueue::next_time: queue is empty");
  // Invariant (kept by cancel() and pop()): heap_.front() is live.
  return heap_.front().time;
}

EventQueue::Event EventQueue::pop() {
  if (empty()) throw std::logic_error("EventQueue::pop: queue is empty");
  std::pop_heap(heap_.begin(), heap_.end(), RunsLater<Entry>{});
  const Entry top = heap_.back();
  heap_.pop_back();
  Event event{top.time, top.id, std::move(actions_[top.slot])};
  release(top.slot);
  done_[static_cast<std::size_t>(event.id)] = true;
  --live_;
  drop_cancelled_top();
  return event;
}

void EventQueue::drop_cancelled_top() {
  while (!heap_.empty() && cancelled_[static_cast<std::size_t>(heap_.front().id)]) {
    std::pop_heap(heap_.begin(), heap_.end(), RunsLater<Entry>{});
    const std::uint32_t slot = heap_.back().slot;
    heap_.pop_back();
    release(slot);  // destroys the cancelled action (and what it captured) now
  }
}

void EventQueue::release(std::uint32_t slot) {
  actions_[slot] = nullptr;
  free_slots_.push_back(slot);  // within its capacity
}

}  // namespace trainsim::core
