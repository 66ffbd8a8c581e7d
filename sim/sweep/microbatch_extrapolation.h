#pragma once
// A sweep point with many micro-batches per replica, timed from three short
// runs (report/microbatch_extrapolation.h has the counts, the check and the
// line; docs/sweep.md, "Speed"). Here the totals are the point's times in whole
// nanoseconds; the rates (tokens/s, MFU, time to train, cost, energy) come from
// the extrapolated iteration time through report::rates(), as for a full run.
#include <array>
#include <functional>
#include <optional>

#include "config/scenario.h"
#include "report/microbatch_extrapolation.h"
#include "sweep/evaluate.h"
#include "workload/memory.h"

namespace trainsim::sweep {

using report::extrapolation_counts;

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
