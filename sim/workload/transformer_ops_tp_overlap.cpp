// TransformerOps: tp_comm_overlap, Megatron-Core's --tp-comm-overlap through
// Transformer Engine's userbuffers (docs/model.md, "Tensor-parallel communication
// overlap"). With sequence parallelism every all-gather that feeds a GEMM runs as a
// ring exchange beside the GEMM's row chunks, and every forward reduce-scatter is
// pipelined behind the row chunks of the GEMM that produces it; the defaults of
// `initialize_ub` (transformer_engine/pytorch/module/base.py):
//   ring_exchange  qkv_fprop, fc1_fprop, proj_dgrad, fc2_dgrad: t splits, copy engines
//   pipeline       proj_fprop, fc2_fprop: 4 splits, the reduce-scatter on 16 SMs
//   bulk           qkv_dgrad, qkv_wgrad, fc1_dgrad, fc1_wgrad: the column-parallel
//                  backward of transformer_ops_tp_backward.cpp, unchanged
// and all-gather buffers in fp8 under an fp8 recipe (`fp8_buf`).
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "workload/transformer_ops.h"

namespace trainsim::workload {

namespace {

constexpr double kFp8Bytes = 1.0;        // an fp8 element
constexpr double kPipelineSplits = 4.0;  // initialize_ub: num_splits of the "pipeline" method

// A dense GEMM: not a grouped expert kernel, which userbuffers never splits.
bool is_gemm(const Op& op) {
  return !op.comm_marker && op.work.kind == hw::KernelClass::kMatmul && !op.work.grouped && op.work.count == 1;
}
bool is_cast(const Op& op) { return !op.comm_marker && op.work.kernel == hw::KernelId::kFp8CastTranspose; }
bool tensor_collective(const Op& op, net::CollectiveKind kind) {
  return op.comm_marker && op.scope == CommScope::kTensor && op.comm_forward == kind;
}

std::string without_backward_suffix(const std::string& name) {
  constexpr std::string_view kSuffix = ".backward";
  if (name.size() > kSuffix.size() && name.ends_with(kSuffix)) return name.substr(0, name.size() - kSuffix.size());
  return name;
}

}  // namespace

double TransformerOps::gather_bytes(const Op& gemm) const {
  return training_.precision == hw::Precision::kFp8 && gemm.work.fp8 ? kFp8Bytes : act_bytes_;
}

// One GEMM (a forward, or one gradient) over rows/parts of its rows: its FLOPs and
// operand bytes recomputed for the chunk, its model FLOPs and parameters shared out.
Op TransformerOps::row_chunk(const Op& gemm, double parts, std::string name) const {
  Op c = gemm;
  c.name = std::move(name);
  hw::KernelWork& w = c.work;
  w.m = gemm.work.m / parts;
  w.flops = 2.0 * w.m * w.n * w.k * w.count;
  w.bytes = (w.m * w.k + w.k * w.n + w.m * w.n) * (w.fp8 ? gemm_bytes_ : act_bytes_) * w.count;
  c.model_flops = w.flops;
  c.grad_params = 0.0;
  c.ring_waits = 0;
  return c;
}

// The all-gather `marker` as t - 1 steps around the tensor-parallel ring, each moving
// one sequence shard on the copy engines beside the GEMM chunk of the shard already
// here (TE's CommOverlapP2PBase::split_overlap_ag); chunk i > 0 waits for its shard.
void TransformerOps::ring_exchange(const Op& marker, const Op& gemm, bool data_gradient, std::vector<Op>& ops) const {
  const int t = static_cast<int>(tp_);
  const std::string base = without_backward_suffix(gemm.name) + (data_gradient ? ".data_gradient" : "");
  for (int i = 0; i < t; ++i) {
    if (i + 1 < t) {
      Op step = marker;
      step.name = without_backward_suffix(marker.name) + ".ring" + std::to_string(i);
      step.comm_forward = net::CollectiveKind::kSendRecv;
      step.comm_backward.reset();
      step.comm_bytes = marker.comm_bytes / act_bytes_ / tp_ * gather_bytes(gemm);
      step.overlapped = true;
      step.copy_engine = true;
      step.column_input = false;
      ops.push_back(std::move(step));
    }
    Op chunk = row_chunk(gemm, tp_, base + ".chunk" + std::to_string(i) + (data_gradient ? ".backward" : ""));
    if (data_gradient) chunk.work.gradients = hw::Gradients::kData;
    if (!data_gradient && i == 0) chunk.grad_params = gemm.grad_params;
    chunk.ring_waits = i > 0 ? 1 : 0;
    ops.push_back(std::move(chunk));
  }
}

// The forward: f (all-gather), [cast], GEMM -> [cast], ring exchange; GEMM, g
// (reduce-scatter) -> 4 x (GEMM chunk, its reduce-scatter beside the next chunk), and
// the next compute waits for the four. Other markers stay blocking.
std::vector<Op> TransformerOps::userbuffers_forward(std::vector<Op> fwd) const {
  std::vector<Op> ops;
  int wait_next = 0;
  for (std::size_t i = 0; i < fwd.size(); ++i) {
    const std::size_t before = ops.size();
    const std::size_t j = i + 1 < fwd.size() && is_cast(fwd[i + 1]) ? i + 2 : i + 1;
    if (tensor_collective(fwd[i], net::CollectiveKind::kAllGather) && j < fwd.size() &&
        column_input_of(fwd, j) == static_cast<long long>(i)) {
      if (j == i + 2) ops.push_back(fwd[i + 1]);
      ring_exchange(fwd[i], fwd[j], false, ops);
      i = j;
    } else if (is_gemm(fwd[i]) && i + 1 < fwd.size() &&
               tensor_collective(fwd[i + 1], net::CollectiveKind::kReduceScatter)) {
      const Op& marker = fwd[i + 1];
      for (int c = 0; c < static_cast<int>(kPipelineSplits); ++c) {
        Op chunk = row_chunk(fwd[i], kPipelineSplits, fwd[i].name + ".chunk" + std::to_string(c));
        if (c == 0) chunk.grad_params = fwd[i].grad_params;
        ops.push_back(std::move(chunk));
        Op scatter = marker;
        scatter.name = marker.name + ".chunk" + std::to_string(c);
        scatter.comm_bytes = marker.comm_bytes / kPipelineSplits;
        scatter.overlapped = true;
        ops.push_back(std::move(scatter));
      }
      wait_next = static_cast<int>(kPipelineSplits);
      ++i;
      continue;
    } else {
      ops.push_back(std::move(fwd[i]));
    }
    for (std::size_t k = before; k < ops.size() && wait_next > 0; ++k) {
      if (ops[k].comm_marker) continue;
      ops[k].ring_waits += wait_next;
      wait_next = 0;
    }
  }
  return ops;
}

// The backward: g's all-gather of the output gradient, the row-parallel GEMM's two
// gradients [and its output gradient's cast] -> [cast], ring exchange beside the data
// gradient's chunks, then the weight gradient over the gathered gradient; the bulk
// re-gather of a column-parallel input carries fp8 under an fp8 recipe.
std::vector<Op> TransformerOps::userbuffers_backward(std::vector<Op> bwd) const {
  std::vector<Op> ops;
  for (std::size_t i = 0; i < bwd.size(); ++i) {
    Op& op = bwd[i];
    if (tensor_collective(op, net::CollectiveKind::kAllGather) && op.overlapped) {
      for (std::size_t k = i + 1; k < bwd.size(); ++k)
        if (is_gemm(bwd[k])) {
          op.comm_bytes = op.comm_bytes / act_bytes_ * gather_bytes(bwd[k]);
          break;
        }
    }
    const bool row_parallel = tensor_collective(op, net::CollectiveKind::kAllGather) && !op.overlapped &&
                              i + 1 < bwd.size() && is_gemm(bwd[i + 1]) &&
                              bwd[i + 1].work.gradients == hw::Gradients::kBoth;
    if (!row_parallel) {
      ops.push_back(std::move(op));
      continue;
    }
    const Op& gemm = bwd[i + 1];
    const bool cast = i + 2 < bwd.size() && is_cast(bwd[i + 2]);
    if (cast) ops.push_back(bwd[i + 2]);
    ring_exchange(op, gemm, true, ops);
    Op weight = row_chunk(gemm, 1.0, without_backward_suffix(gemm.name) + ".weight_gradient.backward");
    weight.work.gradients = hw::Gradients::kWeight;
    weight.grad_params = gemm.grad_params;
    ops.push_back(std::move(weight));
    i += cast ? 2 : 1;
  }
  return ops;
}

}  // namespace trainsim::workload
