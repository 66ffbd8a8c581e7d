#pragma once
// The discrete-event loop: repeatedly takes the earliest event, advances the
// clock to its time and runs its action. Actions may schedule or cancel events.
// No global state: every model holds a reference to its Simulator.
#include <cstdint>

#include "core/event_queue.h"
#include "core/time.h"

namespace trainsim::core {

class Simulator {
 public:
  [[nodiscard]] Time now() const { return now_; }
  // Throws std::invalid_argument when time < now().
  EventId schedule_at(Time time, Action action);
  // Throws std::invalid_argument when delay < 0.
  EventId schedule_after(Time delay, Action action);
  bool cancel(EventId id) { return queue_.cancel(id); }
  [[nodiscard]] std::size_t pending() const { return queue_.size(); }

  // Runs until no event is left; returns the number of events executed.
  std::uint64_t run();
  // Runs events with time <= limit, then sets now() to limit if it is later.
  std::uint64_t run_until(Time limit);
  [[nodiscard]] std::uint64_t events_executed() const { return executed_; }

 private:
  EventQueue queue_;
  Time now_ = 0;
  std::uint64_t executed_ = 0;
};

}  // namespace trainsim::core
