#pragma once
// Reads a shared cluster and its jobs (`trainsim cluster FILE`, docs/cluster.md,
// "The workload file") into a typed ClusterWorkload: the cluster section as a
// scenario's, the scheduler, and each job's scenario (inline or a path relative to
// the file's folder) read by the scenario reader with the shared cluster's section
// in place of its own, on the job's GPUs. Errors name the file, the JSON path, what
// was expected and what was found (a job's scenario errors also name the job).
#include <filesystem>
#include <string>
#include <string_view>

#include "config/cluster_workload.h"

namespace trainsim::scenario {

config::ClusterWorkload read_cluster_workload_file(const std::filesystem::path& path);
// `file` names the source in messages and anchors the jobs' relative scenario paths.
config::ClusterWorkload parse_cluster_workload_text(std::string_view text, const std::string& file);

}  // namespace trainsim::scenario
