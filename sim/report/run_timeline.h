#pragma once
// The full-run timeline of one Monte Carlo trial (the first): training,
// checkpoint, failure, restart and maintenance spans over the whole run, in the
// timeline file format (DESIGN.md, "Timeline file") on one lane, rank -1,
// stream "job" (docs/results.md, "Run timeline").
#include <filesystem>

#include "execution/full_run.h"
#include "config/scenario.h"

namespace trainsim::report {

void write_run_timeline(const std::filesystem::path& path, const config::Scenario& s,
                        const exec::FullRunReport& full_run);

}  // namespace trainsim::report
