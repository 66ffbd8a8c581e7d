#pragma once
// A point with many micro-batches per replica, timed from three short runs
// (docs/sweep.md, "Speed"). Durations are deterministic, so once a pipeline
// schedule (GPipe, 1F1B, interleaved) is in its steady state every further
// micro-batch adds the same whole number of nanoseconds to the iteration and to
// each term of its breakdown. Three runs with m_a < m_b < m_c micro-batches,
// equally spaced and all past the warm-up, show whether that holds for the
// point: when each time grows by exactly as many nanoseconds from m_b to m_c as
// from m_a to m_b, the times for m are extrapolated along that line, bit for bit
// what the full simulation gives while the schedule stays in its steady state.
// With the flow network model too: a transfer's rate depends on what shares its
// links, which in the steady state repeats as well; when it does not, the check
// fails and the point is simulated in full.
// The rates (tokens/s, MFU, time to train, cost, energy) come from the
// extrapolated iteration time through report::rates(), as for a full run.
#include <array>
#include <functional>
#include <optional>

#include "config/scenario.h"
#include "sweep/evaluate.h"
#include "workload/memory.h"

namespace trainsim::sweep {

// The micro-batch counts per replica that stand for the point's m, or none when
// m is too small to gain from them or the point is not one this applies to (the
// asynchronous modes, whose step time comes from a replay). The steady state
// repeats every pp micro-batches (or a divisor of pp: stages wait on each other
// around the pipeline), so the counts are pp apart: m_a is the least count
// >= max(2, pp x chunks) (every stage's warm-up filled) with m_a = m modulo pp
// (the interleaved schedule's counts are multiples of pp), m_b = m_a + pp,
// m_c = m_a + 2 pp, and m >= 2 m_c.
std::optional<std::array<long long, 3>> extrapolation_counts(const config::Scenario& s);

// Times a scenario in full (time_point, or a stand-in in tests).
using PointTimer = std::function<void(const config::Scenario&, PointResult&)>;

// Fills the fields time_point() fills (status, times, rates, memory, exposed
// communication) from the three short runs and returns true; returns false,
// leaving `r` as it was, when it does not apply, a short run is refused, or a
// time does not grow linearly over them (then simulate in full). When the
// growth differs only over the first step (a warm-up transient), a fourth run
// with m_c + pp micro-batches is tried and the line taken through the last
// three when they are on one.
// `memory`: the scenario's estimate, when the caller has it (none: made here).
bool extrapolate_microbatches(const config::Scenario& s, const PointTimer& time, PointResult& r,
                              const workload::MemoryEstimate* memory = nullptr);

}  // namespace trainsim::sweep
