#include "execution/kernel_classes.h"

#include <stdexcept>
#include <string>

#include "execution/simulate.h"
#include "workload/memory.h"

namespace trainsim::exec {

namespace {

// Indices into config::kKernelClasses.
enum Class : int {
  kGemm,
  kAttention,
  kLayernorm,
  kGelu,
  kResidual,
  kEmbedding,
  kSoftmaxCrossEntropy,
  kOptimizer,
  kAllReduce,
  kOther,
};
static_assert(kOther + 1 == static_cast<int>(kNumKernelClasses));

}  // namespace

int kernel_class_of(const workload::Op& op) {
  if (op.comm_marker) return -1;
  // Ops that say where a profiler files them: PyTorch eager's casts, adds and
  // reductions, and the ops no measured kernel does (the residual's backward,
  // SwiGLU, unfused attention's softmax, trainsim-train's layout copies).
  if (!op.kernel_class.empty()) {
    const std::size_t i = config::kernel_class_index(op.kernel_class);
    if (i < config::kKernelClasses.size()) return static_cast<int>(i);
    throw std::logic_error("unknown kernel class " + std::string(op.kernel_class) + " of op " + op.name);
  }
  switch (op.work.kind) {
    case hw::KernelClass::kMatmul: return kGemm;
    case hw::KernelClass::kAttention: return kAttention;
    case hw::KernelClass::kMemoryBound: break;
  }
  switch (op.work.kernel) {
    case hw::KernelId::kEmbeddingForward:
    case hw::KernelId::kEmbeddingBackward: return kEmbedding;
    case hw::KernelId::kLayernormForward:
    case hw::KernelId::kLayernormBackward:
    case hw::KernelId::kTorchLayernormForward:
    case hw::KernelId::kTorchLayernormBackward: return kLayernorm;
    case hw::KernelId::kGeluForward:
    case hw::KernelId::kGeluBackward:
    case hw::KernelId::kTorchGeluForward:
    case hw::KernelId::kTorchGeluBackward: return kGelu;
    case hw::KernelId::kResidualForward: return kResidual;
    case hw::KernelId::kSoftmaxCrossEntropy:
    case hw::KernelId::kTorchLogSoftmaxForward:
    case hw::KernelId::kTorchLogSoftmaxBackward: return kSoftmaxCrossEntropy;
    case hw::KernelId::kAdamw:
    case hw::KernelId::kTorchAdamw: return kOptimizer;
    case hw::KernelId::kAttentionForward:
    case hw::KernelId::kAttentionBackward:
    case hw::KernelId::kSdpaForward:
    case hw::KernelId::kSdpaBackward: return kAttention;
    case hw::KernelId::kTorchAdd:
    case hw::KernelId::kTorchCast:
    case hw::KernelId::kTorchFill:
    case hw::KernelId::kTorchSumRows:
    case hw::KernelId::kTorchCat:
    case hw::KernelId::kFp8Cast:
    case hw::KernelId::kFp8CastTranspose:
    case hw::KernelId::kMoePermute:
    case hw::KernelId::kMoeUnpermute: return kOther;
    case hw::KernelId::kNone: break;
  }
  // Ops no measured kernel does and that name no class.
  return kOther;
}

KernelClassSeconds kernel_class_seconds(const config::Scenario& s) {
  const workload::ParallelConfig& p = s.parallel;
  if (p.tensor != 1 || p.pipeline != 1 || p.context != 1 || p.expert != 1 || p.zero_stage != 0 ||
      p.mode != workload::TrainingMode::kSync)
    throw std::invalid_argument(
        "kernel classes are predicted for synchronous data-parallel runs only (TP = PP = CP = EP = 1, no ZeRO), "
        "the layouts trainsim-train runs");
  const std::unique_ptr<hw::ComputeModel> compute = compute_model_for(s);
  const hw::Precision precision = s.training.precision;
  KernelClassSeconds out{};
  const auto add = [&](const workload::Op& op, double times) {
    const int c = kernel_class_of(op);
    if (c >= 0) out[static_cast<std::size_t>(c)] += times * compute->seconds(op.work, precision);
  };
  const auto add_all = [&](const std::vector<workload::Op>& ops, double times) {
    for (const workload::Op& op : ops) add(op, times);
  };

  const workload::TransformerOps ops(s.model, s.training, s.training.micro_batch_size);
  const auto microbatches = static_cast<double>(workload::microbatches_per_replica(s.training, p));
  add_all(ops.embedding_forward(), microbatches);
  add_all(ops.embedding_backward(), microbatches);
  add_all(ops.head_forward(), microbatches);
  add_all(ops.head_backward(), microbatches);
  for (long long l = 0; l < s.model.num_layers; ++l) {
    add_all(ops.layer_forward(l), microbatches);
    add_all(ops.layer_backward(l), microbatches);
    if (p.recompute != workload::Recompute::kNone) add_all(ops.layer_recompute(l, p.recompute), microbatches);
  }
  const double params = workload::stage_parameters(s.model, p, 0);
  add(ops.optimizer_step(workload::OptimizerScope{params, params, p.data > 1, false}), 1.0);
  return out;
}

}  // namespace trainsim::exec
