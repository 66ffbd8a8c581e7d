#pragma once
// Reads the cluster of `trainsim collective --cluster FILE`: a full scenario
// (only its "cluster" section counts) or a file holding just the cluster object
// ({"gpu": ..., "num_nodes": ...}). Both go through the scenario reader, so the
// checks, defaults and messages are the ones `trainsim run` gives.
#include <filesystem>
#include <string>
#include <string_view>

#include "hardware/cluster.h"

namespace trainsim::scenario {

// Throws ScenarioError naming the file and the JSON path as the user
// wrote it (a cluster-only file's keys sit at the top level, not under /cluster).
hw::ClusterSpec read_cluster_file(const std::filesystem::path& path);
// `file` names the source in messages.
hw::ClusterSpec parse_cluster_text(std::string_view text, const std::string& file);

}  // namespace trainsim::scenario
