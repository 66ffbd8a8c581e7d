// Throughput of the simulator core: raw EventQueue push+pop, and the
// Simulator loop where every event schedules its successor (the steady state
// of a running simulation). Items are events: one item = one event pushed and
// popped (or scheduled and executed).
#include <benchmark/benchmark.h>

#include <cstdint>
#include <vector>

#include "core/event_queue.h"
#include "core/rng.h"
#include "core/simulator.h"
#include "core/time.h"

namespace trainsim::core {
namespace {

// Pushes N events at pseudo-random times (drawn before timing starts), then
// pops them all. The times span 1 s in ns, so ties are rare.
void BM_EventQueuePushPop(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  std::vector<Time> times(n);
  Rng rng(1);
  for (auto& t : times) t = static_cast<Time>(rng.below(kSecond));
  std::uint64_t sink = 0;
  for (auto _ : state) {
    EventQueue q;
    for (const Time t : times) q.push(t, [&sink] { ++sink; });
    while (!q.empty()) q.pop().action();
    benchmark::DoNotOptimize(sink);
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) *
                          static_cast<std::int64_t>(n));
}
BENCHMARK(BM_EventQueuePushPop)->RangeMultiplier(10)->Range(10'000, 1'000'000)->Unit(benchmark::kMillisecond);

// `chains` independent event chains; each event schedules the next event of
// its chain 1..1000 ns later until kEvents events have run in total. With one
// chain the queue holds a single event (pure loop and std::function overhead);
// with 1000 chains the heap has ten levels, closer to a real model.
constexpr std::uint64_t kEvents = 1'000'000;

struct Chain {
  Simulator* sim;
  Rng* rng;
  std::uint64_t* remaining;
};

struct Step {
  Chain* chain;
  void operator()() const {
    if (*chain->remaining == 0) return;
    --*chain->remaining;
    chain->sim->schedule_after(static_cast<Time>(1 + chain->rng->below(1000)), Step{chain});
  }
};

void BM_SimulatorChain(benchmark::State& state) {
  const auto chains = static_cast<std::uint64_t>(state.range(0));
  std::uint64_t executed = 0;
  for (auto _ : state) {
    Simulator sim;
    Rng rng(2);
    std::uint64_t remaining = kEvents - chains;  // the seeds count as events
    Chain chain{&sim, &rng, &remaining};
    for (std::uint64_t c = 0; c < chains; ++c) sim.schedule_at(0, Step{&chain});
    executed += sim.run();
  }
  if (executed != kEvents * static_cast<std::uint64_t>(state.iterations())) {
    state.SkipWithError("wrong number of events executed");
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(executed));
}
BENCHMARK(BM_SimulatorChain)->Arg(1)->Arg(1000)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace trainsim::core
