#pragma once
// PyTorch DistributedDataParallel as its Reducer runs a data-parallel step of the
// PyTorch eager program (framework "pytorch_eager" with data parallelism;
// docs/model.md, "PyTorch eager under DDP"; torch/csrc/distributed/c10d/reducer.cpp):
// gradients go into flat fp32 buckets, each bucket all-reduced as soon as its last
// gradient is in, and copied back into the parameters' .grad when all are done
// (gradient_as_bucket_view false, the default).
#include <vector>

#include "workload/transformer_ops.h"

namespace trainsim::workload {

// Whether the job is the PyTorch eager program on data-parallel replicas, which DDP wraps.
[[nodiscard]] inline bool under_ddp(const TrainingConfig& t, const ParallelConfig& p) {
  return t.framework == Framework::kPytorchEager && p.data > 1 && p.zero_stage == 0;
}

// Whether the job is the PyTorch eager program sharded by FSDP2 (zero_stage 3 over
// data-parallel ranks; docs/model.md, "PyTorch eager under FSDP2").
[[nodiscard]] inline bool under_fsdp2(const TrainingConfig& t, const ParallelConfig& p) {
  return t.framework == Framework::kPytorchEager && p.data > 1 && p.zero_stage == 3;
}

// DDP's bucket caps in bytes: bucket_cap_mb 25 (MiB) and the first bucket's
// dist._DEFAULT_FIRST_BUCKET_BYTES, 1 MiB (the last layers' gradients, ready first,
// start their all-reduce early). A bucket takes whole parameters and closes once it
// reaches its cap.
inline constexpr double kDdpBucketBytes = 25.0 * 1024.0 * 1024.0;
inline constexpr double kDdpFirstBucketBytes = 1024.0 * 1024.0;
// Per fp32 gradient element: the autograd hook's copy into the bucket, scaled by
// 1/world size on the way (at::mul_out: read 4, write 4), and finalize_backward's copy
// back into .grad (read 4, write 4).
inline constexpr double kDdpCopyBytes = 8.0;

// `backward` with DDP's copy into its bucket after each op that completes
// gradients: a kernel of kDdpCopyBytes per gradient element, which now completes them
// (the bucket is ready when its last copy is done). Launched by the host like the op.
std::vector<Op> with_ddp_bucket_copies(std::vector<Op> backward);

// finalize_backward's copy of every bucket back into the parameters' gradients.
Op ddp_copy_buckets_to_grads(double params);

}  // namespace trainsim::workload
