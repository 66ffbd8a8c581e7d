#pragma once
// How the model is trained (scenario "training"), independent of the layout.
#include <optional>

#include "hardware/precision.h"

namespace trainsim::workload {

enum class Optimizer { kAdam, kSgd };
// "flash": fused attention that never stores the s x s scores (Dao et al. 2022),
// the GPU's own kernel (cuDNN's on H100); "flash2": the same computation by
// FlashAttention-2's kernels (Dao 2023), slower on Hopper (docs/model.md,
// "Attention efficiency"); "unfused": QK^T, softmax, dropout and AV as separate
// kernels (Megatron-LM in SC'21).
enum class AttentionBackend { kFlash, kFlash2, kUnfused };
// Flash attention of either kernel: one fused kernel, causal half, scores never stored.
[[nodiscard]] constexpr bool is_flash(AttentionBackend b) { return b != AttentionBackend::kUnfused; }
// "fused": one kernel reads the logits and writes the loss and their gradient (ours,
// Megatron-LM's --cross-entropy-loss-fusion); "unfused": Megatron-LM's default
// vocab-parallel cross-entropy, separate fp32 PyTorch kernels (max, subtract, exp,
// sum, divide); "torch": PyTorch's F.cross_entropy over the logits cast to fp32
// (torchtitan): a cast, log_softmax and nll_loss, and their backward kernels.
enum class CrossEntropy { kFused, kUnfused, kTorch };
// Which program runs the step (docs/model.md, "PyTorch eager"). "fused": our own
// kernels in 16-bit with fused norms, residuals and loss (trainsim-train, llm.c,
// Megatron-LM); "pytorch_eager": a GPT-2 nn.Module in PyTorch eager under
// torch.autocast(bfloat16) over fp32 parameters (SDPA attention, fused AdamW),
// every autocast cast, fp32 layer norm, loss and gradient kernel of its own;
// "trainsim_train": the fused list as trainsim-train runs it (kernels/trainer/
// gpt_model.cpp): q, k, v and the attention output moved between the GEMMs' rows and
// the flash kernels' heads by four copy kernels per layer, and the loss and its
// gradient in one kernel of the forward pass (docs/model.md, "trainsim-train").
enum class Framework { kFused, kPytorchEager, kTrainsimTrain };

// A column-parallel linear's backward under tensor parallelism (docs/model.md,
// "Tensor-parallel backward"): kAsync, Megatron-LM's and Transformer Engine's (the
// data gradient's reduction beside the weight gradient; with sequence parallelism
// the saved input shards gathered again beside the data gradient); kSync, PyTorch
// DTensor's (torchtitan: both gradients, then the blocking reduction).
enum class TpBackward { kAsync, kSync };

// The fp8 recipe's scaling (Megatron-LM's --fp8-recipe, Transformer Engine's recipes):
// per-tensor scales from an amax history ("delayed") or from the tensor itself
// ("tensorwise", current scaling), one scale per 32 elements (MXFP8, Blackwell), or
// per 1 x 128 / 128 x 128 block ("blockwise"). trainsim prices their GEMMs and casts
// alike (docs/model.md, "FP8 recipes"); the recipe decides how fp8_param_gather gathers.
enum class Fp8Recipe { kDelayed, kTensorwise, kMxfp8, kBlockwise };

// The fp4 format's block scaling (docs/model.md, "FP4 recipes"): NVFP4, an e4m3 scale
// per 16 e2m1 elements (Transformer Engine's NVFP4BlockScaling, Megatron-LM's
// --fp4-recipe nvfp4), or OCP MXFP4, an e8m0 scale per 32 (OCP Microscaling Formats
// v1.0; AMD CDNA4's fp4, and Blackwell's too).
enum class Fp4Recipe : std::uint8_t { kNvfp4, kMxfp4 };

struct TrainingConfig {
  long long global_batch_size = 1;  // sequences per iteration
  long long micro_batch_size = 1;   // sequences per micro-batch per model replica
  hw::Precision precision = hw::Precision::kBf16;
  // Gradients are accumulated and all-reduced in this type. Megatron-LM keeps fp32
  // main gradients for bf16 (accumulate_allreduce_grads_in_fp32), so fp32 is the
  // default for bf16, fp8 and tf32; fp16 and fp32 training keep their own type.
  hw::Precision grad_reduce_dtype = hw::Precision::kFp32;
  std::optional<double> train_tokens;
  Optimizer optimizer = Optimizer::kAdam;
  AttentionBackend attention_backend = AttentionBackend::kFlash;
  CrossEntropy cross_entropy = CrossEntropy::kFused;
  Framework framework = Framework::kFused;
  TpBackward tp_backward = TpBackward::kAsync;
  // Megatron-Core's first_last_layers_bf16 (num_layers_at_start_in_bf16,
  // num_layers_at_end_in_bf16): under an fp8 recipe these first and last decoder
  // layers keep their GEMMs in bf16 (docs/model.md, "FP8 recipes"). 0: none.
  int bf16_first_layers = 0;
  int bf16_last_layers = 0;
  // Megatron-Core's optimizer_cpu_offload with optimizer_offload_fraction (the
  // HybridDeviceOptimizer): the share of each rank's distributed-optimizer shard
  // whose master weights and moments live in host memory and which the host's
  // CPUs update (docs/model.md, "CPU optimizer offload"); 0: none.
  double optimizer_offload_fraction = 0.0;
  // overlap_cpu_optimizer_d2h_h2d: the copies pipelined with the CPU's update,
  // parameter by parameter.
  bool overlap_cpu_optimizer_d2h_h2d = false;
  // Megatron-Core's fp8_param_gather: the weights of the fp8 GEMMs are Transformer
  // Engine fp8 tensors and the distributed optimizer all-gathers them as fp8, 1 byte
  // each (docs/model.md, "FP8 recipes").
  bool fp8_param_gather = false;
  // Megatron-Core's fp4_param_gather (--fp4-param-gather): the fp4 GEMMs' weights are
  // NVFP4 tensors, all-gathered rowwise as such: 0.5625 bytes each with their block
  // scales (distrib_optimizer.py, quantize_nvfp4_param_shard).
  bool fp4_param_gather = false;
  Fp8Recipe fp8_recipe = Fp8Recipe::kDelayed;  // Megatron-LM's default
  Fp4Recipe fp4_recipe = Fp4Recipe::kNvfp4;
  // Megatron-Core's --disable-parameter-transpose-cache: Transformer Engine quantizes
  // each weight per use instead of caching its quantized copy and transpose across
  // the step's micro-batches (memory.cpp, quantized_weight_cache).
  bool disable_parameter_transpose_cache = false;
  // torchtitan's training.compile (torch.compile of each transformer block). false:
  // its Llama model code runs eager, each elementwise op (float RMSNorm, complex
  // rotary embeddings, repeated key/value heads, SwiGLU) a kernel of its own
  // (transformer_ops_eager_llama.cpp; docs/model.md, "torchtitan's Llama eager").
  bool torch_compile = true;
  // Megatron-LM's apply_rope_fusion (--no-rope-fusion turns it off): rotary
  // embeddings of the queries and keys as one fused kernel (Transformer Engine's
  // fused_apply_rotary_pos_emb; a torch.compile'd rotary), or as the rotate-half
  // PyTorch ops t cos + rotate_half(t) sin (docs/model.md, "Forward, per layer").
  bool rope_fusion = true;
  // Megatron-Core's bias_activation_fusion (--no-bias-swiglu-fusion turns it off): a
  // SwiGLU MLP's gate x up as one fused kernel, or as silu(gate) * up in PyTorch ops,
  // whose product also keeps silu's output for its backward (docs/model.md, "Forward,
  // per layer"). Dense SwiGLU MLPs only.
  bool bias_activation_fusion = true;
  // enable_cuda_graph (Megatron-Core's and NeMo's name), for the pytorch_eager step
  // only: the whole step captured as one CUDA graph and replayed, as PyTorch's
  // whole-network capture does (torch.cuda.graph; docs/model.md, "CUDA graphs").
  bool cuda_graph = false;
  // LLM Foundry's use_train_metrics (its MPT model's default): Composer evaluates
  // LanguageCrossEntropy and LanguagePerplexity on every training micro-batch, each a
  // cross-entropy forward over the logits in fp32 (docs/model.md, "Outside the layers").
  int train_metric_passes = 0;
};

// Bytes of one quantized (fp8 or fp4) GEMM weight element in the distributed
// optimizer's parameter all-gather: 1 with fp8_param_gather, except under MXFP8, whose
// recipes gather bf16 into the gradient buffer and quantize after
// (reuse_grad_buf_for_mxfp8_param_ag, Megatron-Core param_and_grad_buffer.py); NVFP4's
// 0.5625 with fp4_param_gather; else the weight's own bytes.
// Bytes of one element of a quantized GEMM operand with its block scales: fp8's 1,
// NVFP4's 0.5 + 1/16 = 0.5625, MXFP4's 0.5 + 1/32 = 0.53125; else the precision's.
inline double quantized_element_bytes(const TrainingConfig& t) {
  if (t.precision == hw::Precision::kFp4 && t.fp4_recipe == Fp4Recipe::kMxfp4) return 0.5 + 1.0 / 32.0;
  return hw::bytes_per_element(t.precision);
}

inline double fp8_weight_gather_bytes(const TrainingConfig& t, double weight_bytes) {
  if (t.fp4_param_gather) return quantized_element_bytes(t);
  return t.fp8_param_gather && t.fp8_recipe != Fp8Recipe::kMxfp8 ? 1.0 : weight_bytes;
}
// Either param gather: the distributed optimizer's parameters are the quantized copies.
[[nodiscard]] inline bool quantized_param_gather(const TrainingConfig& t) {
  return t.fp8_param_gather || t.fp4_param_gather;
}

// Bytes of one activation element: fp32 and tf32 keep 4, 16-bit and fp8 training
// keep 16-bit activations (fp8 is only the GEMM operands).
inline double activation_element_bytes(const TrainingConfig& t) {
  return t.precision == hw::Precision::kFp32 || t.precision == hw::Precision::kTf32 ? 4.0 : 2.0;
}

}  // namespace trainsim::workload
