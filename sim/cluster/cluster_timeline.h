#pragma once
// The shared cluster as a timeline file (DESIGN.md, "Timeline file"; docs/cluster.md,
// "Timeline"): one lane per GPU (rank = the GPU's index in the cluster, stream "job"),
// each job's segments on the GPUs it held as "restart", "train" and "checkpoint"
// spans named for the job, and the cluster's GPU utilization as a counter. The GUI
// opens it as any timeline: a Gantt chart of jobs over nodes, with its zoom and
// level of detail. A job smaller than a node takes the lowest GPUs of the node free
// from its start to its end.
#include <ostream>

#include "cluster/schedule.h"
#include "config/cluster_workload.h"

namespace trainsim::cluster {

void write_cluster_timeline(std::ostream& os, const config::ClusterWorkload& w, const ScheduleResult& r);

}  // namespace trainsim::cluster
