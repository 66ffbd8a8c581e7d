#pragma once
// Writers of the run's timeline: the trainsim timeline file (DESIGN.md,
// "Timeline file") and a Chrome/Perfetto trace (opens in ui.perfetto.dev).
#include <filesystem>
#include <vector>

#include "execution/full_run.h"
#include "execution/simulate.h"
#include "config/scenario.h"

namespace trainsim::report {

void write_timeline(const std::filesystem::path& path, const config::Scenario& s, const exec::SimulationOutput& out);

// A process per GPU (named with its node), a thread per stream. Ranks not
// simulated in full show their representative's spans (args.replica_of).
// With `full_run` (a scenario with failures), a "job" process after them holds
// the run-level events of the trial the run timeline shows, on the run's
// wall-clock axis: failures as instants; training, checkpoint, detection, down,
// restart, reload and maintenance spans on one track; degraded-link episodes and
// background checkpoint writes on tracks of their own (docs/results.md, "Perfetto trace").
void write_trace(const std::filesystem::path& path, const config::Scenario& s, const exec::SimulationOutput& out,
                 const std::vector<long long>& ranks, const exec::FullRunReport* full_run = nullptr);

}  // namespace trainsim::report
