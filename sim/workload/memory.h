#pragma once
// Memory per GPU at the peak of an iteration (docs/model.md, "Memory"): model
// states after Rajbhandari et al. (ZeRO, 2020) and activations after Korthikanti
// et al. (2022, sections 4-5), generalized to GQA, SwiGLU, MoE and flash
// attention, per pipeline stage with the micro-batches its schedule keeps in flight.
#include <string>
#include <string_view>
#include <vector>

#include "workload/model_config.h"
#include "workload/parallel_config.h"
#include "workload/training_config.h"

namespace trainsim::workload {

struct MemoryEstimate {
  // Model states held by one GPU, after ZeRO sharding over the data-parallel
  // group (docs/model.md, "Model states").
  double weights = 0;
  double gradients = 0;
  double optimizer_states = 0;
  double activations = 0;  // at the stage's peak
  // ZeRO-3: the full parameters of the units (layer, embedding, head) gathered
  // for computation at the peak, one unit or two with prefetch; included in weights.
  double gathered_weights = 0;
  // PyTorch eager: autocast's bf16 casts of the linear weights alive at the peak;
  // included in weights (docs/model.md, "Memory of a PyTorch eager step").
  double weight_casts = 0;
  // Transformer Engine's quantized copies of the fp8 (fp4) GEMMs' weights and their
  // transposes, cached across a step's micro-batches without fp8_param_gather;
  // included in weights (docs/model.md, "FP8 recipes").
  double quantized_weight_cache = 0;
  // PyTorch DDP's flat fp32 gradient buckets, allocated when the model is wrapped and
  // kept (gradient_as_bucket_view false: apart from .grad); included in gradients
  // (workload/ddp.h).
  double ddp_buckets = 0;
  // PyTorch eager: cuBLAS workspaces held by the caching allocator; included in
  // activations (which then read "everything besides the model states").
  double workspaces = 0;
  // Host memory one GPU's process holds: the activations CPU offload keeps there
  // at the end of a forward pass, and CPU optimizer offload's master weights,
  // moments and gradient copies (not in total(), which is the GPU's).
  double host_bytes = 0;
  int stage = 0;           // pipeline stage (the most loaded one in estimate_memory)
  double parameters = 0;   // parameters held by one GPU of the stage
  // Micro-batch passes whose activations are alive at the peak, counted in
  // whole-stage units (layers alive / layers of the stage).
  double in_flight_microbatches = 1;
  [[nodiscard]] double total() const { return weights + gradients + optimizer_states + activations; }
};

// Bytes per parameter of weights, gradients and optimizer states.
struct StateBytes {
  double weights = 0;
  double gradients = 0;
  double optimizer = 0;
};
StateBytes state_bytes_per_parameter(const TrainingConfig& training);

// How a layer's tensors are split across the tensor-parallel group.
struct ActivationSplit {
  int tensor = 1;                  // t: heads, QKV/MLP widths and scores split t ways
  bool sequence_parallel = false;  // norms, dropouts and layer inputs split t ways too
  int context = 1;                 // c: every rank holds s/c tokens of each sequence
};

// Activation bytes one transformer layer keeps for its backward pass, for one
// micro-batch of b sequences, on one GPU of the tensor-parallel group.
// `layer`: which decoder layer (dense and MoE layers differ); -1: any layer of a
// model whose layers are all alike (std::logic_error if they are not).
double layer_activation_bytes(const ModelConfig& m, const TrainingConfig& t, Recompute r, long long b,
                              ActivationSplit split = {}, long long layer = -1);
// layer_activation_bytes of every decoder layer, in model order, for the
// layout's split and recomputation and one micro-batch of training.micro_batch_size.
std::vector<double> layers_activation_bytes(const ModelConfig& m, const TrainingConfig& t, const ParallelConfig& p);
// What recomputation brings back to life during that layer's backward: the whole
// layer's activations (full), the ones torchtitan's op policy did not save
// (selective_op: none minus saved), else nothing.
double recomputed_activation_bytes(const ModelConfig& m, const TrainingConfig& t, Recompute r, long long b,
                                   ActivationSplit split, long long layer = -1);
// Embedding dropout mask (first stage).
double embedding_activation_bytes(const ModelConfig& m, const TrainingConfig& t, long long b,
                                  ActivationSplit split = {});
// Final norm and output-layer inputs, fp32 softmax of the loss (last stage).
double head_activation_bytes(const ModelConfig& m, const TrainingConfig& t, long long b, ActivationSplit split = {});
// Bytes the loss's backward allocates beside the activations for as long as it runs
// (cross_entropy "torch": 8 s b V / t; the fused and Megatron-LM losses work in place: 0).
double loss_backward_transient_bytes(const ModelConfig& m, const TrainingConfig& t, long long b,
                                     ActivationSplit split = {});
// Both: what one pipeline stage holding everything keeps outside its layers.
double outside_layers_activation_bytes(const ModelConfig& m, const TrainingConfig& t, long long b);

// Parameters one GPU of pipeline stage `stage` holds: its layers' projections
// split t ways (norms replicated), the word embedding (split t ways) and learned
// positions on the first stage, the final norm and output layer on the last
// (Megatron-LM keeps a copy of a tied embedding there when pp > 1).
double stage_parameters(const ModelConfig& m, const ParallelConfig& p, int stage);
// Of those, the expert weights (E/ep experts per layer, split t ways).
double stage_expert_parameters(const ModelConfig& m, const ParallelConfig& p, int stage);

// Bytes of model states per GPU for `params` local parameters under ZeRO stage
// `zero_stage` over `data` data-parallel ranks (Rajbhandari et al. 2020, Figure 1
// and section 5): stage 1 shards the optimizer states, 2 the gradients too, 3 the
// weights too. Without gathered buffers.
StateBytes sharded_state_bytes(const TrainingConfig& training, double params, int zero_stage, int data);

// PyTorch eager (training.framework "pytorch_eager", docs/model.md "Memory of a
// PyTorch eager step"): what scripts/pytorch-gpt-step.py's program keeps, tensor
// by tensor, after autograd's saved tensors (tools/autograd/derivatives.yaml).
struct EagerMemory {
  double parameters = 0;     // P: fp32 weights 4P, AdamW exp_avg + exp_avg_sq 8P, gradients 4P
  double block_parameters = 0;  // one block's (its attention, MLP and norms)
  double root_parameters = 0;   // wte, wpe, ln_f (and an untied lm_head): FSDP2's root group
  double head_gradients = 0;    // fp32 gradients the head's backward leaves (ln_f, lm_head / the tied wte)
  double embedding_gradients = 0;  // ... and the embedding's (wpe, an untied wte)
  double weight_casts = 0;   // bf16 casts of every linear weight (lm_head's included), 2 B each
  double layer_casts = 0;    // of which one layer's
  double layer_saved = 0;    // tensors one block saves for its backward
  double head_saved = 0;     // final norm input, statistics and bf16 output (not the logits)
  double log_probs = 0;      // log_softmax's fp32 output, saved by log_softmax and nll_loss: 4 T V
  double logits_bf16 = 0;    // lm_head's bf16 output (2 T V), and each bf16 T x V gradient
  double logits_fp32 = 0;    // logits.float() (4 T V), and each fp32 T x V gradient
  double token_ids = 0;      // int64 inputs and targets (16 T) and the saved positions (8 s)
  double workspaces = 0;     // cuBLAS workspaces of the forward's and the autograd thread's handles
  double embedding_grad = 0; // tied: the embedding's V x h fp32 gradient before the engine adds it
  // The two candidate peaks of one GPU (and DDP): the log_softmax backward (every
  // activation alive, no gradient yet) and the embedding backward (every gradient, no
  // activation).
  [[nodiscard]] double head_backward_peak(long long layers) const;
  [[nodiscard]] double embedding_backward_peak() const;
  // Under FSDP2 over `shards` ranks (docs/model.md, "PyTorch eager under FSDP2"): the
  // states every moment holds (sharded weights and moments, the root's unsharded
  // weights), and the largest moment of the step walked in program order.
  [[nodiscard]] double fsdp2_states(double shards) const;
  struct Moment {
    double total = 0;
    double weight_casts = 0;
    double gradients = 0;
    std::string_view at;  // the op it is in
  };
  [[nodiscard]] Moment fsdp2_peak(long long layers, double shards) const;
};
EagerMemory eager_memory(const ModelConfig& m, const TrainingConfig& t);

// Every stage's peak, and the largest of them.
std::vector<MemoryEstimate> memory_per_stage(const ModelConfig& m, const TrainingConfig& t, const ParallelConfig& p);
MemoryEstimate estimate_memory(const ModelConfig& m, const TrainingConfig& t, const ParallelConfig& p);

}  // namespace trainsim::workload
