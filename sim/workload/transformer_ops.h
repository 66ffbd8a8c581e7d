#pragma once
// A transformer's kernels with their FLOPs and bytes, for one micro-batch of b
// sequences of s tokens on one GPU (docs/model.md, "Operations"). Forward,
// backward and recomputation lists are built per layer so schedules can
// interleave them.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hardware/compute_model.h"
#include "network/collective.h"
#include "workload/model_config.h"
#include "workload/parallel_config.h"
#include "workload/training_config.h"

namespace trainsim::workload {

// FlashAttention-2 (Dao 2023; its benchmark_flash_attention.py counts the same):
// the backward pass runs 5 matmuls to the forward's 2, so 2.5x the forward FLOPs.
inline constexpr double kFlashBackwardFactor = 2.5;

// The group a communication marker's collective runs over.
enum class CommScope : std::uint8_t { kTensor, kContext, kExpert };

// The parts of a MoE layer under moe_shared_expert_overlap, in forward order: routing
// and permutation, the dispatch all-to-all, the shared experts' first linear, the
// routed experts, the combine all-to-all, the shared experts' second linear, and
// the unpermutation with the shared output's sum (docs/model.md, "Shared experts
// beside the all-to-alls").
enum class MoeOverlapPart : std::uint8_t { kNone, kRoute, kDispatch, kSharedUp, kRouted, kCombine, kSharedDown, kFinish };

struct Op {
  std::string name;
  hw::KernelWork work;
  // FLOPs this op contributes to model FLOPs (MFU): matmul and attention FLOPs
  // as Megatron-LM counts them (full, non-causal attention; no recomputation).
  double model_flops = 0.0;
  // Backward ops: parameters whose gradients are complete when the op ends.
  double grad_params = 0.0;
  long long layer = -1;  // -1: embedding or output layer
  // Communication markers: a marker computes nothing; the pass that runs it
  // starts its collective over the `scope` group (tensor: Megatron-LM's
  // conjugate f and g operators, Shoeybi et al. 2019, Korthikanti et al. 2022;
  // context: a ring-attention step; expert: MoE dispatch and combine).
  // `comm_forward` runs in the forward pass, `comm_backward` in the backward
  // pass; either may be absent (identity). comm_bytes is S of the collective.
  bool comm_marker = false;
  CommScope scope = CommScope::kTensor;
  std::optional<net::CollectiveKind> comm_forward;
  std::optional<net::CollectiveKind> comm_backward;
  double comm_bytes = 0.0;
  // An `overlapped` marker's transfer runs beside the compute that follows it (ring
  // attention's steps, a column-parallel linear's backward collectives); a compute
  // op with `ring_waits` = n waits for the n oldest such transfers still outstanding.
  bool overlapped = false;
  int ring_waits = 0;
  // The same for overlapped expert-parallel all-to-alls, which queue apart (MoE
  // overlaps hold one across compute that has transfers of its own).
  int expert_waits = 0;
  // The transfer runs on the copy engines (net::Collective::copy_engine).
  bool copy_engine = false;
  // Where the op sits in a MoE layer whose shared experts run beside the token
  // all-to-alls (moe_shared_expert_overlap; transformer_ops_moe.cpp); kNone elsewhere.
  MoeOverlapPart moe_part = MoeOverlapPart::kNone;
  // tp_enter's f: its gathered output feeds a column-parallel linear.
  bool column_input = false;
  // Expert parameters: their gradients are reduced over the expert
  // data-parallel group, apart from the dense ones (Megatron-LM's expert buffers).
  bool expert_params = false;
  // Memory-bound ops whose backward kernels do not move 2 x the forward bytes
  // (the unfused softmax, the loss): their backward bytes, set where the op is made.
  std::optional<double> backward_bytes;
  // Markers whose backward collective moves other bytes than the forward one (an fp8
  // input gathered forward, its 16-bit gradient reduced backward).
  std::optional<double> backward_comm_bytes;
  // False for an op whose forward kernel already produced its input gradient
  // (trainsim-train's single-pass loss): the backward pass has no op for it.
  bool has_backward = true;
  // The kernel class a profiler files this op (and its backward) under, a name
  // of the measured-run classes (e.g. "other"), where its kernel does not say
  // it: PyTorch eager's casts, adds and reductions (docs/model.md, "PyTorch
  // eager"), and ops without a measured kernel (the residual's backward,
  // SwiGLU, the unfused softmax, the SGD step). Empty: the class follows the kernel. A view of a string literal (ops are copied a
  // lot: no allocation, nothing to copy).
  std::string_view kernel_class;
};

// The weight elements of `op` that an fp8 or fp4 recipe stores quantized: a GEMM that
// runs quantized holds k x n per matrix (its bias, part of grad_params, stays 16-bit);
// 0 for anything else (docs/model.md, "FP8 recipes").
[[nodiscard]] inline double quantized_weight_params(const Op& op) {
  if (op.comm_marker || op.work.kind != hw::KernelClass::kMatmul || !op.work.fp8) return 0.0;
  return std::min(op.grad_params, op.work.k * op.work.n * op.work.count);
}

// What a rank's optimizer step runs over (docs/model.md, "Optimizer step").
struct OptimizerScope {
  double shard = 0.0;      // parameters the rank updates
  double local = 0.0;      // parameters of its model chunk: the gradient buffer it zeroes
  bool prescale = false;   // Megatron-Core DDP scales each bucket by 1/dp before reducing it
  bool fsdp = false;       // ZeRO-3: PyTorch FSDP's clip_grad_norm_ and the optimizer on the shard
};

class TransformerOps {
 public:
  // `tensor`: tensor-parallel size t; matmuls, attention heads and the vocabulary
  // are split t ways (Megatron-LM column/row-parallel linears); with
  // `sequence_parallel` norms, dropouts and residuals are split along the sequence
  // too, and each all-reduce becomes a reduce-scatter + all-gather pair.
  // `context`: context-parallel size c; every rank holds s/c tokens of each
  // sequence and attention runs as a ring over the c ranks. `expert`:
  // expert-parallel size e; each rank holds E/e experts and tokens reach them by
  // all-to-all (docs/model.md, "Context and expert parallelism").
  // `folded_experts`: expert_tensor_parallel_size 1 with tensor > 1 (Megatron-Core's
  // MoE parallel folding): experts whole, tokens dispatched from the sequence shards.
  // `tp_overlap`: the sequence-parallel collectives run beside the GEMMs next to them
  // (transformer_ops_tp_overlap.cpp). `sharded_gradients`: ZeRO-3, whose units'
  // gradients are reduce-scattered as they are made, not accumulated into a
  // main_grad buffer (embedding_backward).
  TransformerOps(const ModelConfig& model, const TrainingConfig& training, long long micro_batch, int tensor = 1,
                 bool sequence_parallel = false, int context = 1, int expert = 1, bool folded_experts = false,
                 ContextComm context_comm = ContextComm::kP2p, TpOverlap tp_overlap = TpOverlap::kNone,
                 bool sharded_gradients = false, bool shared_expert_overlap = false);

  [[nodiscard]] std::vector<Op> embedding_forward() const;
  [[nodiscard]] std::vector<Op> layer_forward(long long layer) const;
  [[nodiscard]] std::vector<Op> head_forward() const;  // final norm, output layer, loss
  [[nodiscard]] std::vector<Op> head_backward() const;
  [[nodiscard]] std::vector<Op> layer_backward(long long layer) const;
  // Work redone before a layer's backward: the whole forward (full) or the
  // attention core (selective, unfused attention only; flash recomputes inside
  // its own backward already).
  [[nodiscard]] std::vector<Op> layer_recompute(long long layer, Recompute granularity) const;
  [[nodiscard]] std::vector<Op> embedding_backward() const;
  // A rank's optimizer step (memory bound; docs/model.md, "Optimizer step"): the
  // update of its shard and the bookkeeping of its gradient buffer.
  [[nodiscard]] Op optimizer_step(const OptimizerScope& scope) const;
  // The update of `params` parameters alone (no gradient buffer of the rank's own).
  [[nodiscard]] Op optimizer_step(double params) const { return optimizer_step(OptimizerScope{params, 0.0, false, false}); }

  // PyTorch eager under FSDP2 (docs/model.md, "PyTorch eager under FSDP2"): one of
  // FSDP2's copies around its collectives, over a unit of `params` parameters in fp32.
  // One of FSDP2's copies around its collectives, `bytes` read and written
  // (docs/model.md, "ZeRO-3 and FSDP"); the eager program's host issues it.
  [[nodiscard]] Op fsdp_copy(std::string name, double bytes, long long layer, hw::HostPass pass) const;

  // Model FLOPs of one micro-batch, forward + backward (= 3 x forward).
  [[nodiscard]] double model_flops_per_microbatch() const;

 private:
  [[nodiscard]] Op matmul(std::string name, double m, double n, double k, double params, long long layer,
                          int count = 1) const;
  [[nodiscard]] Op elementwise(std::string name, double bytes, double params, long long layer,
                               hw::KernelId kernel = hw::KernelId::kNone) const;
  [[nodiscard]] static Op backward_of(const Op& fwd, double flops_factor, double bytes_factor);
  // An fp8 recipe's cast-transpose around `gemm` (none for a 16-bit GEMM), and
  // `gemm` pushed after it; `input_from_norm`: a LayerNormLinear's GEMM.
  // Under an fp8 recipe, a GEMM that stays in 16 bits (the output layer,
  // first_last_layers_bf16): not fp8, operands of the activation type.
  void keep_16_bit(Op& gemm) const;
  [[nodiscard]] std::optional<Op> fp8_cast(const Op& gemm, bool input_from_norm) const;
  void push_gemm(std::vector<Op>& ops, Op gemm, bool input_from_norm) const;
  [[nodiscard]] double softmax_bytes_per_score(bool backward) const;
  [[nodiscard]] double loss_bytes_per_logit(bool backward) const;
  [[nodiscard]] std::vector<Op> attention_core_forward(long long layer) const;
  [[nodiscard]] hw::KernelId activation_kernel() const;
  // Multi-head latent attention's projections, from the input norm's output to Q, K, V.
  [[nodiscard]] std::vector<Op> mla_projections(long long layer) const;
  // Ring attention around the flash attention op `attention` (cp_comm_type "p2p"):
  // c blocks, the local K and V passed on beside them; backward, each block passes
  // K, V and their gradients on.
  [[nodiscard]] std::vector<Op> ring_attention_forward(const Op& attention, long long layer) const;
  [[nodiscard]] std::vector<Op> ring_attention_backward(long long layer) const;
  // cp_comm_type "a2a" (Ulysses) around `attention`: Q, K, V of `qkv_width` and the
  // output of `out_width` elements per token exchanged over the context group.
  [[nodiscard]] std::vector<Op> ulysses_attention_forward(const Op& attention, double qkv_width, double out_width,
                                                          long long layer) const;
  // cp_comm_type "all_gather" around the flash attention op `attention`.
  [[nodiscard]] std::vector<Op> all_gather_attention_forward(const Op& attention, long long layer) const;
  [[nodiscard]] std::vector<Op> all_gather_attention_backward(long long layer) const;
  // PyTorch's ring attention (context_parallel_rotate_method; transformer_ops_torch_ring.cpp).
  [[nodiscard]] std::vector<Op> torch_ring_attention_forward(const Op& attention, long long layer) const;
  [[nodiscard]] std::vector<Op> torch_ring_attention_backward(long long layer) const;
  [[nodiscard]] Op torch_ring_step(std::string name, double bytes, long long layer) const;
  [[nodiscard]] double torch_ring_kv_bytes() const;  // one step's K and V, repeated to the query heads
  [[nodiscard]] std::vector<Op> moe_forward(long long layer) const;
  // Rotary embeddings of the rank's queries and keys (none without rope, with MLA's
  // own mla_rope, or in torchtitan's eager block, which lists its rotary ops).
  [[nodiscard]] std::optional<Op> rotary_embedding(long long layer) const;
  // A dense SwiGLU's activation as separate PyTorch kernels (bias_activation_fusion false).
  [[nodiscard]] Op unfused_swiglu(long long layer) const;
  // The shared experts' ops (its TP markers, first linear and activation; its second
  // linear and TP marker), tagged with their MoeOverlapPart when they overlap.
  [[nodiscard]] std::vector<Op> shared_expert_up(long long layer) const;
  [[nodiscard]] std::vector<Op> shared_expert_down(long long layer) const;
  // Under moe_shared_expert_overlap: the MoE block of a layer's forward (the ops with
  // a MoeOverlapPart), backward, the all-to-alls beside the shared experts' gradients.
  [[nodiscard]] std::vector<Op> moe_overlap_backward(const std::vector<Op>& block) const;
  // recompute_granularity "selective_op": what torchtitan's policy recomputes.
  [[nodiscard]] std::vector<Op> op_sac_recompute(long long layer) const;
  [[nodiscard]] double ring_kv_bytes() const;  // one ring step's K and V
  // K or V channels per tensor-parallel rank: query groups split t ways, at least one head.
  [[nodiscard]] double kv_width_per_rank() const;
  [[nodiscard]] double attention_k_width() const;
  [[nodiscard]] double attention_v_width() const;
  static Op context_collective(std::string name, net::CollectiveKind kind, double bytes, long long layer);
  // The f (before a column-parallel linear) and g (after a row-parallel one) markers.
  [[nodiscard]] Op tp_enter(std::string name, long long layer) const;
  [[nodiscard]] Op tp_exit(std::string name, long long layer) const;
  // The backward pass of `fwd` (transformer_ops_tp_backward.cpp): each op's
  // backward in reverse order, a column-parallel linear's as Megatron-LM runs it;
  // `own(i, ops)`, where given, emits fwd[i]'s backward itself where it returns true.
  [[nodiscard]] std::vector<Op> reverse_pass(const std::vector<Op>& fwd,
                                             const std::function<bool(std::size_t, std::vector<Op>&)>& own = {}) const;
  // Backward FLOPs per forward FLOP: flash attention's kFlashBackwardFactor, else 2.
  [[nodiscard]] double backward_flops_factor(const Op& fwd) const;
  [[nodiscard]] static long long column_input_of(const std::vector<Op>& fwd, std::size_t j);
  // TpOverlap (transformer_ops_tp_overlap.cpp): a layer's forward and backward with
  // each sequence-parallel all-gather run as a ring exchange beside the chunks of the
  // GEMM that consumes it, and each reduce-scatter behind the chunks of the GEMM that
  // produces it (userbuffers: the forward ones pipelined; symmetric memory: forward
  // and backward, the chunks copied to their owners and summed there).
  [[nodiscard]] std::vector<Op> overlapped_forward(std::vector<Op> fwd) const;
  [[nodiscard]] std::vector<Op> overlapped_backward(std::vector<Op> bwd) const;
  // userbuffers' "pipeline" (4 chunks, each reduce-scatter beside the next chunk);
  // returns the transfers the next compute waits for.
  int pipelined_reduce_scatter(const Op& gemm, const Op& marker, std::vector<Op>& ops) const;
  // PyTorch's fused_matmul_reduce_scatter: t row chunks of `gemm` (its forward, or its
  // data gradient with `data_gradient`), t - 1 of them copied to their owners beside
  // the next, [`weight`,] then the sum of the t partial shards.
  void scattered_matmul(const Op& gemm, const Op& marker, bool data_gradient, const Op* weight,
                        std::vector<Op>& ops) const;
  [[nodiscard]] std::vector<Op> layer_forward_ops(long long layer) const;
  // An all-gather of `marker` as t - 1 ring steps beside the t row chunks of `gemm`
  // (its forward, or its data gradient with `data_gradient`).
  void ring_exchange(const Op& marker, const Op& gemm, bool data_gradient, std::vector<Op>& ops) const;
  // One GEMM (forward or one gradient) of `gemm` over 1/parts of its rows.
  [[nodiscard]] Op row_chunk(const Op& gemm, double parts, std::string name) const;
  // Row chunk i of `parts`: the forward's (the first with the parameters) or the data gradient's.
  [[nodiscard]] Op gemm_chunk(const Op& gemm, double parts, int i, bool data_gradient) const;
  // An fp8 GEMM's sequence-parallel input is gathered in fp8 (fp8_gathered_inputs).
  void fp8_gathered_inputs(std::vector<Op>& ops) const;
  // Bytes per element of an all-gather feeding `gemm`: fp8 for an fp8 GEMM.
  [[nodiscard]] double gather_bytes(const Op& gemm) const;
  void column_parallel_backward(const std::vector<Op>& fwd, std::size_t f, std::size_t j, std::vector<Op>& ops) const;

  // PyTorch eager under torch.autocast(bfloat16) over fp32 parameters: the
  // kernels it launches, one op each (transformer_ops_eager.cpp; docs/model.md,
  // "PyTorch eager").
  [[nodiscard]] bool eager() const { return training_.framework == Framework::kPytorchEager; }
  // trainsim-train (docs/model.md, "trainsim-train"): its layout copies around the
  // flash kernels and its single-pass loss.
  [[nodiscard]] bool trainsim_train() const { return training_.framework == Framework::kTrainsimTrain; }
  [[nodiscard]] std::vector<Op> trainer_attention_forward(long long layer) const;
  [[nodiscard]] std::vector<Op> eager_embedding_forward() const;
  [[nodiscard]] std::vector<Op> eager_layer_forward(long long layer) const;
  [[nodiscard]] std::vector<Op> eager_head_forward() const;
  [[nodiscard]] std::vector<Op> eager_head_backward() const;
  [[nodiscard]] std::vector<Op> eager_layer_backward(long long layer) const;
  [[nodiscard]] std::vector<Op> eager_embedding_backward() const;
  [[nodiscard]] Op eager_optimizer_step(double params) const;
  // A memory-bound eager kernel: `kernel` prices it, `kernel_class` files it.
  [[nodiscard]] Op eager_kernel(std::string name, double bytes, double params, long long layer, hw::KernelId kernel,
                                std::string_view kernel_class) const;

  // torchtitan's Llama block run eager (training.compile false;
  // transformer_ops_eager_llama.cpp): its elementwise ops, one op per function.
  [[nodiscard]] bool llama_eager() const { return !training_.torch_compile; }
  [[nodiscard]] Op llama_eager_norm(std::string name, double users, double params, long long layer) const;
  [[nodiscard]] std::vector<Op> llama_eager_attention_inputs(long long layer) const;
  [[nodiscard]] Op llama_eager_swiglu(long long layer) const;
  [[nodiscard]] Op llama_eager_residual(std::string name, long long layer) const;

  ModelConfig model_;
  TrainingConfig training_;
  double b_;          // sequences
  double s_;          // tokens per sequence on this rank (s / context-parallel size)
  double tokens_;     // b s
  double act_bytes_;  // bytes of one activation element
  double gemm_bytes_; // bytes of one GEMM operand element
  double tp_;         // tensor-parallel size
  double sp_;         // divisor of the sequence-split elementwise work: t with SP, else 1
  double cp_;         // context-parallel size; tokens_ is already the local s/c share
  double ep_;         // expert-parallel size
  double etp_;        // the experts' tensor-parallel size: tp_, or 1 when folded
  ContextComm context_comm_;  // how context-parallel attention exchanges K and V (kP2p when cp_ = 1)
  TpOverlap tp_overlap_;      // kNone unless sequence parallelism with t > 1
  bool sharded_gradients_;    // ZeRO-3: no main_grad accumulation
  bool shared_overlap_;       // moe_shared_expert_overlap, with shared experts
};

}  // namespace trainsim::workload
