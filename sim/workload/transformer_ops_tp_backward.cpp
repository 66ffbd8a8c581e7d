// TransformerOps: the backward pass of a column-parallel linear under tensor
// parallelism as Megatron-LM and Transformer Engine run it (docs/model.md,
// "Tensor-parallel backward"): the data gradient, then its reduce-scatter (or
// all-reduce) beside the weight gradient; with sequence parallelism the input's
// sequence shards gathered again beside the data gradient.
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "workload/transformer_ops.h"

namespace trainsim::workload {

namespace {

bool is_fp8_cast(const Op& op) { return !op.comm_marker && op.work.kernel == hw::KernelId::kFp8CastTranspose; }
bool is_gemm(const Op& op) { return !op.comm_marker && op.work.kind == hw::KernelClass::kMatmul; }

}  // namespace

// The f marker whose gathered output feeds the GEMM fwd[j] and nothing else:
// f, [fp8 cast], GEMM, then an op that is neither a GEMM nor a cast, and a compute
// op before f (the next compute of the backward pass, which waits for the
// reduction). -1: fwd[j] is not such a GEMM.
long long TransformerOps::column_input_of(const std::vector<Op>& fwd, std::size_t j) {
  if (!is_gemm(fwd[j]) || j + 1 >= fwd.size() || is_gemm(fwd[j + 1]) || is_fp8_cast(fwd[j + 1])) return -1;
  std::size_t c = j;
  if (c > 0 && is_fp8_cast(fwd[c - 1])) --c;
  if (c < 2 || !fwd[c - 1].column_input) return -1;
  for (std::size_t i = c - 1; i-- > 0;)
    if (!fwd[i].comm_marker) return static_cast<long long>(c - 1);
  return -1;
}

// Backward of f, [cast], GEMM (fwd[f..j]) as Transformer Engine's LayerNormLinear
// and Linear (and Megatron-LM's ColumnParallelLinear) run it with
// tp_comm_overlap off:
//   [SP: all-gather of the saved input shards, beside the data gradient]
//   [cast of the output gradient], data gradient,
//   reduce-scatter (SP) or all-reduce of the input gradient, beside the weight
//   gradient (which waits for the all-gather),
// and the next compute of the pass waits for the reduction (`wait_next`).
void TransformerOps::column_parallel_backward(const std::vector<Op>& fwd, std::size_t f, std::size_t j,
                                              std::vector<Op>& ops) const {
  const Op& marker = fwd[f];
  const Op& gemm = fwd[j];
  if (sp_ > 1.0) {
    Op gather = marker;
    gather.name = marker.name + ".input_gather.backward";
    gather.comm_forward = net::CollectiveKind::kAllGather;
    gather.comm_backward.reset();
    gather.backward_comm_bytes.reset();
    gather.overlapped = true;
    ops.push_back(std::move(gather));
  }
  if (j > f + 1) ops.push_back(backward_of(fwd[f + 1], 2.0, 2.0));  // the output gradient's cast
  Op data = backward_of(gemm, 1.0, 1.0);
  data.name = gemm.name + ".data_gradient.backward";
  data.work.gradients = hw::Gradients::kData;
  data.model_flops = gemm.model_flops;
  data.grad_params = 0.0;
  ops.push_back(std::move(data));
  Op reduce = backward_of(marker, 1.0, 1.0);
  reduce.overlapped = true;
  ops.push_back(std::move(reduce));
  Op weight = backward_of(gemm, 1.0, 1.0);
  weight.name = gemm.name + ".weight_gradient.backward";
  weight.work.gradients = hw::Gradients::kWeight;
  weight.model_flops = gemm.model_flops;
  weight.ring_waits = sp_ > 1.0 ? 1 : 0;  // the gathered input
  ops.push_back(std::move(weight));
}

// The backward of `fwd`, one op after another in reverse, a column-parallel
// linear's as above; `own(i, ops)` emits fwd[i]'s backward itself where it returns
// true (context parallelism's ring; it is asked first); a reduction left running makes the next
// compute op wait for it (Op::ring_waits).
std::vector<Op> TransformerOps::reverse_pass(const std::vector<Op>& fwd,
                                             const std::function<bool(std::size_t, std::vector<Op>&)>& own) const {
  std::vector<Op> ops;
  bool wait_next = false;  // the next compute waits for a column-parallel reduction
  for (std::size_t i = fwd.size(); i-- > 0;) {
    const std::size_t before = ops.size();
    long long f = -1;
    if (own && own(i, ops)) {
      // emitted (or skipped) by `own`
    } else if (f = training_.tp_backward == TpBackward::kAsync ? column_input_of(fwd, i) : -1; f >= 0) {
      column_parallel_backward(fwd, static_cast<std::size_t>(f), i, ops);
      i = static_cast<std::size_t>(f);
    } else if (fwd[i].has_backward) {
      ops.push_back(backward_of(fwd[i], backward_flops_factor(fwd[i]), 2.0));
    }
    for (std::size_t k = before; k < ops.size() && wait_next; ++k) {
      if (ops[k].comm_marker) continue;
      ++ops[k].ring_waits;
      wait_next = false;
    }
    if (f >= 0) wait_next = true;
  }
  return ops;
}

}  // namespace trainsim::workload
