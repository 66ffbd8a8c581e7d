#pragma once
// The ends of a custom topology's cables (scenario "cluster.inter_node.links"):
// each a NIC, written "node<N>.nic<R>", or a switch (any other name not starting
// with "node"). Internal to scenario/.
#include <string>

#include "hardware/cluster.h"

namespace trainsim::scenario {

// Types every end of `cluster`'s custom links (CableEnd::nic) and checks each NIC
// against the cluster's nodes and NICs; throws ScenarioError naming `file` and
// the end's path under `links_path` (e.g. "/cluster/inter_node/links/1/a").
// Only a custom topology of several nodes uses its cables (one node has no
// network), so the reader calls this only then.
void type_cable_ends(hw::ClusterSpec& cluster, const std::string& file, const std::string& links_path);

}  // namespace trainsim::scenario
