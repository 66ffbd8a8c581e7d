// TransformerOps: tensor-parallel communication beside the GEMMs (docs/model.md,
// "Tensor-parallel communication overlap"), with sequence parallelism.
//
// TpOverlap::kUserbuffers, Megatron-Core's --tp-comm-overlap through Transformer
// Engine's userbuffers, with the defaults of `initialize_ub`
// (transformer_engine/pytorch/module/base.py):
//   ring_exchange  qkv_fprop, fc1_fprop, proj_dgrad, fc2_dgrad: t splits, copy engines
//   pipeline       proj_fprop, fc2_fprop: 4 splits, the reduce-scatter on 16 SMs
//   bulk           qkv_dgrad, qkv_wgrad, fc1_dgrad, fc1_wgrad: the column-parallel
//                  backward of transformer_ops_tp_backward.cpp, unchanged
// and all-gather buffers in fp8 under an fp8 recipe (`fp8_buf`).
//
// TpOverlap::kSymmetricMemory, torchtitan's enable_async_tensor_parallel: the
// micro-pipeline TP pass of torch.compile (torch/_inductor/fx_passes/
// micro_pipeline_tp.py) turns all-gather -> mm into fused_all_gather_matmul and
// mm -> reduce-scatter into fused_matmul_reduce_scatter
// (torch/distributed/_symmetric_memory/__init__.py), in the forward and backward
// graphs alike, over DTensor's backward (tp_backward "sync"):
//   all-gather -> mm   the ring exchange above, copies on the copy engines
//   mm -> scatter      t row chunks, each (but the rank's own) copied to its owner on
//                      the copy engines beside the next chunk, then one kernel sums
//                      the t partial shards
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

// One transfer of `bytes` out of the collective `marker`, on the copy engines beside
// the compute that follows it.
Op copy_engine_step(const Op& marker, std::string name, double bytes) {
  Op step = marker;
  step.name = std::move(name);
  step.comm_forward = net::CollectiveKind::kSendRecv;
  step.comm_backward.reset();
  step.comm_bytes = bytes;
  step.overlapped = true;
  step.copy_engine = true;
  step.column_input = false;
  return step;
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

// Row chunk i of `parts` of `gemm`: its forward (the first carries the GEMM's
// parameters), or with `data_gradient` its data gradient.
Op TransformerOps::gemm_chunk(const Op& gemm, double parts, int i, bool data_gradient) const {
  const std::string base = without_backward_suffix(gemm.name) + (data_gradient ? ".data_gradient" : "");
  Op chunk = row_chunk(gemm, parts, base + ".chunk" + std::to_string(i) + (data_gradient ? ".backward" : ""));
  if (data_gradient) chunk.work.gradients = hw::Gradients::kData;
  if (!data_gradient && i == 0) chunk.grad_params = gemm.grad_params;
  return chunk;
}

// The all-gather `marker` as t - 1 steps around the tensor-parallel ring, each moving
// one sequence shard on the copy engines beside the GEMM chunk of the shard already
// here (TE's CommOverlapP2PBase::split_overlap_ag); chunk i > 0 waits for its shard.
void TransformerOps::ring_exchange(const Op& marker, const Op& gemm, bool data_gradient, std::vector<Op>& ops) const {
  const int t = static_cast<int>(tp_);
  // The forward's gathered input is already fp8-sized (fp8_gathered_inputs); the
  // output gradient's buffer holds fp8 under userbuffers (fp8_buf).
  const bool fp8_buffer = data_gradient && tp_overlap_ == TpOverlap::kUserbuffers;
  const double shard = marker.comm_bytes / tp_ * (fp8_buffer ? gather_bytes(gemm) / act_bytes_ : 1.0);
  for (int i = 0; i < t; ++i) {
    if (i + 1 < t)
      ops.push_back(copy_engine_step(marker, without_backward_suffix(marker.name) + ".ring" + std::to_string(i), shard));
    Op chunk = gemm_chunk(gemm, tp_, i, data_gradient);
    chunk.ring_waits = i > 0 ? 1 : 0;
    ops.push_back(std::move(chunk));
  }
}

// userbuffers' pipeline: 4 row chunks of `gemm`, each followed by its share of the
// reduce-scatter `marker`, which runs beside the next chunk.
int TransformerOps::pipelined_reduce_scatter(const Op& gemm, const Op& marker, std::vector<Op>& ops) const {
  for (int c = 0; c < static_cast<int>(kPipelineSplits); ++c) {
    ops.push_back(gemm_chunk(gemm, kPipelineSplits, c, false));
    Op scatter = marker;
    scatter.name = marker.name + ".chunk" + std::to_string(c);
    scatter.comm_bytes = marker.comm_bytes / kPipelineSplits;
    scatter.overlapped = true;
    ops.push_back(std::move(scatter));
  }
  return static_cast<int>(kPipelineSplits);
}

// fused_matmul_reduce_scatter (_pipelined_produce_and_all2all): chunk i of the t row
// chunks is the partial result of rank i's shard; the t - 1 others' go out on the
// copy engines (S / t each) beside the next chunk; the sum reads the t partials of
// this rank's shard and writes it: (t + 1) S / t bytes.
void TransformerOps::scattered_matmul(const Op& gemm, const Op& marker, bool data_gradient, const Op* weight,
                                      std::vector<Op>& ops) const {
  const int t = static_cast<int>(tp_);
  const std::string suffix = data_gradient ? ".backward" : "";
  const double shard = marker.comm_bytes / tp_;
  for (int i = 0; i < t; ++i) {
    ops.push_back(gemm_chunk(gemm, tp_, i, data_gradient));
    if (i + 1 < t)
      ops.push_back(copy_engine_step(marker, without_backward_suffix(marker.name) + ".copy" + std::to_string(i) + suffix,
                                     shard));
  }
  if (weight != nullptr) ops.push_back(*weight);
  Op sum = elementwise(without_backward_suffix(marker.name) + ".reduce" + suffix, (tp_ + 1.0) * shard, 0.0, gemm.layer);
  sum.work.backward = data_gradient;
  sum.ring_waits = t - 1;
  ops.push_back(std::move(sum));
}

// The forward: f (all-gather), [cast], GEMM -> [cast], ring exchange; GEMM, g
// (reduce-scatter) -> the pipeline (userbuffers; the next compute waits for its four
// transfers) or the scattered matmul (symmetric memory). Other markers stay blocking.
std::vector<Op> TransformerOps::overlapped_forward(std::vector<Op> fwd) const {
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
      if (tp_overlap_ == TpOverlap::kUserbuffers) {
        wait_next = pipelined_reduce_scatter(fwd[i], fwd[i + 1], ops);
      } else {
        scattered_matmul(fwd[i], fwd[i + 1], false, nullptr, ops);
      }
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
// gradient's chunks, then the weight gradient over the gathered gradient. Symmetric
// memory also takes DTensor's column-parallel backward, both gradients [, cast], the
// reduce-scatter -> [cast], the scattered data gradient with the weight gradient
// before the sum.
std::vector<Op> TransformerOps::overlapped_backward(std::vector<Op> bwd) const {
  std::vector<Op> ops;
  const auto weight_of = [&](const Op& gemm) {
    Op weight = row_chunk(gemm, 1.0, without_backward_suffix(gemm.name) + ".weight_gradient.backward");
    weight.work.gradients = hw::Gradients::kWeight;
    weight.grad_params = gemm.grad_params;
    return weight;
  };
  for (std::size_t i = 0; i < bwd.size(); ++i) {
    Op& op = bwd[i];
    const bool both = i + 1 < bwd.size() && is_gemm(bwd[i + 1]) && bwd[i + 1].work.gradients == hw::Gradients::kBoth;
    if (tensor_collective(op, net::CollectiveKind::kAllGather) && !op.overlapped && both) {
      const Op& gemm = bwd[i + 1];
      const bool cast = i + 2 < bwd.size() && is_cast(bwd[i + 2]);
      if (cast) ops.push_back(bwd[i + 2]);
      ring_exchange(op, gemm, true, ops);
      ops.push_back(weight_of(gemm));
      i += cast ? 2 : 1;
      continue;
    }
    if (tp_overlap_ == TpOverlap::kSymmetricMemory && is_gemm(op) && op.work.gradients == hw::Gradients::kBoth) {
      const bool cast = i + 1 < bwd.size() && is_cast(bwd[i + 1]);
      const std::size_t m = cast ? i + 2 : i + 1;
      if (m < bwd.size() && tensor_collective(bwd[m], net::CollectiveKind::kReduceScatter) && !bwd[m].overlapped) {
        if (cast) ops.push_back(bwd[i + 1]);
        const Op weight = weight_of(op);
        scattered_matmul(op, bwd[m], true, &weight, ops);
        i = m;
        continue;
      }
    }
    ops.push_back(std::move(op));
  }
  return ops;
}

}  // namespace trainsim::workload
