#pragma once
// Writers of the run's timeline: the trainsim timeline file (DESIGN.md,
// "Timeline file") and a Chrome/Perfetto trace (opens in ui.perfetto.dev).
#include <filesystem>
#include <vector>

#include "execution/simulate.h"
#include "scenario/scenario.h"

namespace trainsim::report {

void write_timeline(const std::filesystem::path& path, const scenario::Scenario& s, const exec::SimulationOutput& out);

// A process per GPU (named with its node), a thread per stream. Ranks not
// simulated in full show their representative's spans (args.replica_of).
void write_trace(const std::filesystem::path& path, const scenario::Scenario& s, const exec::SimulationOutput& out,
                 const std::vector<long long>& ranks);

}  // namespace trainsim::report
