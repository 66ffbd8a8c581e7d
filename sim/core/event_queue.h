#pragma once
// Pending events ordered by (time, sequence number). The sequence number is
// assigned when an event is pushed, so events at the same time run in the
// order they were scheduled. Cancelled events are skipped lazily.
#include <cstdint>
#include <functional>
#include <vector>

#include "core/time.h"

namespace trainsim::core {

using EventId = std::uint64_t;
using Action = std::function<void()>;

class EventQueue {
 public:
  EventId push(Time time, Action action);
  // Returns false when the event already ran, was cancelled or never existed.
  bool cancel(EventId id);
  [[nodiscard]] bool empty() const;       // no live (uncancelled) event left
  [[nodiscard]] std::size_t size() const;  // live events
  [[nodiscard]] Time next_time() const;    // precondition: !empty()

  struct Event {
    Time time;
    EventId id;
    Action action;
  };
  Event pop();  // precondition: !empty(); removes and returns the earliest live event

 private:
  void drop_cancelled_top();
  void release(std::uint32_t slot);
  // The heap orders small trivially copyable entries; the actions stay put in
  // slots (reused once their event has run or been dropped), so sifting moves
  // 24 bytes per entry instead of a std::function.
  struct Entry {
    Time time;
    EventId id;
    std::uint32_t slot;
  };
  std::vector<Entry> heap_;
  std::vector<Action> actions_;            // by slot
  std::vector<std::uint32_t> free_slots_;  // capacity >= actions_.size(): pushing never throws
  std::vector<bool> cancelled_;  // indexed by EventId
  std::vector<bool> done_;       // indexed by EventId: popped or cancelled
  std::size_t live_ = 0;
  EventId next_id_ = 0;
};

}  // namespace trainsim::core
