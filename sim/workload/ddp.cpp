#include "workload/ddp.h"

#include <utility>

namespace trainsim::workload {

namespace {
Op copy_op(std::string name, double params, long long layer, hw::HostPass pass) {
  Op op;
  op.name = std::move(name);
  op.work.kind = hw::KernelClass::kMemoryBound;
  op.work.bytes = kDdpCopyBytes * params;
  op.work.host_pass = pass;
  op.layer = layer;
  op.kernel_class = "other";  // a vectorized elementwise kernel in a profiler's view
  return op;
}
}  // namespace

std::vector<Op> with_ddp_bucket_copies(std::vector<Op> backward) {
  std::vector<Op> out;
  out.reserve(backward.size() * 2);
  for (Op& op : backward) {
    const double params = op.comm_marker ? 0.0 : op.grad_params;
    if (params <= 0.0) {
      out.push_back(std::move(op));
      continue;
    }
    Op copy = copy_op(op.name + ".ddp_copy_to_bucket", params, op.layer, op.work.host_pass);
    copy.grad_params = params;
    copy.expert_params = op.expert_params;
    op.grad_params = 0.0;
    out.push_back(std::move(op));
    out.push_back(std::move(copy));
  }
  return out;
}

Op ddp_copy_buckets_to_grads(double params) {
  return copy_op("ddp.copy_buckets_to_grads", params, -1, hw::HostPass::kBackward);
}

}  // namespace trainsim::workload
