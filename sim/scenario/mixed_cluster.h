#pragma once
// A job on a mixed cluster (cluster.pools; docs/strategies.md, "Mixed clusters"),
// resolved once its layout is checked: by the scenario reader and for each sweep
// point. With pipeline_balance "speed" (the default) and no split of the user's,
// each stage gets the decoder layers that make the slowest stage fastest, priced on
// the slowest GPU among its ranks (workload/heterogeneous.h); what a mixed cluster
// does not model yet is refused here, naming the key.
#include "config/scenario.h"

namespace trainsim::scenario {

// Throws ScenarioError (the scenario's file, /parallelism/... or /training/...).
void resolve_mixed_cluster(config::Scenario& s);

}  // namespace trainsim::scenario
