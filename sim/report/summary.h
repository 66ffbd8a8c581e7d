#pragma once
// The readable summary `trainsim run` prints.
#include <string>

#include "report/metrics.h"

namespace trainsim::report {

std::string summary_text(const config::Scenario& s, const Metrics& m);

}  // namespace trainsim::report
