#pragma once
// Checkpoint size, write cost and the optimal interval (docs/model.md,
// "Reliability"; docs/reliability.md).
#include <vector>

#include "faults/failure_config.h"

namespace trainsim::faults {

// What a checkpoint holds: the weights and the optimizer states (with mixed
// precision the fp32 master copy is one of the states), never gradients or
// activations. `weight_bytes` and `optimizer_bytes` are per parameter
// (workload::state_bytes_per_parameter).
struct CheckpointInputs {
  double parameters = 0.0;
  double weight_bytes = 2.0;
  double optimizer_bytes = 12.0;
  int tensor = 1, pipeline = 1, data = 1;
  int zero_stage = 0;
};

struct CheckpointSize {
  double total_bytes = 0.0;    // N (w + o): the whole checkpoint on storage
  double per_gpu_bytes = 0.0;  // the largest share one GPU holds (what it copies to host memory)
};

// total = N (w + o); per GPU = N w / (t p [d if ZeRO-3]) + N o / (t p [d if ZeRO >= 1]).
CheckpointSize checkpoint_size(const CheckpointInputs& in);

// Time training stops for one checkpoint (s): blocking, size / write bandwidth;
// asynchronous, the per-GPU share / host copy bandwidth (the storage write runs
// in the background and takes background_write_s).
struct CheckpointCost {
  double blocking_s = 0.0;
  double background_write_s = 0.0;  // async only
  double reload_s = 0.0;            // size / read bandwidth, after a restart
};
CheckpointCost checkpoint_cost(const CheckpointSize& size, const FailureConfig& f);

// Young (1974): sqrt(2 d M).
double young_interval(double checkpoint_cost_s, double mtti_s);
// Daly (2006), eq. 37: sqrt(2 d M) [1 + sqrt(d / (2M)) / 3 + d / (18 M)] - d for d < 2M, else M.
double daly_interval(double checkpoint_cost_s, double mtti_s);

// Job-level failure processes: each component kind's MTBF over its count
// (n independent components of MTBF m fail with MTBF m / n).
struct JobProcess {
  Component component = Component::kNode;
  double mean_s = 0.0;  // mean time between the job's failures from this kind
};
// The processes a config gives for a cluster of `nodes` nodes, `gpus` GPUs,
// `links` NIC cables and `switches` network switches; the node-day rate
// becomes a node process of MTBF 1000 days / rate.
std::vector<JobProcess> job_processes(const FailureConfig& f, long long gpus, long long nodes, long long links,
                                      long long switches);
// Mean time to interrupt of the job: 1 / sum of 1 / mean_s.
double mean_time_to_interrupt(const std::vector<JobProcess>& processes);

}  // namespace trainsim::faults
