#pragma once
// One data-parallel rank of trainsim-train on one GPU: the GPT-2-style model of
// gpt_layout.h / gpt_ref.h in bf16 mixed precision (fp32 master weights, AdamW moments and
// gradients; bf16 compute copy of the weights and bf16 activations, as llm.c), its buffers,
// and the launches of its forward, backward and optimizer step on the rank's compute stream.
//
// GEMMs: forward through the cuBLASLt wrapper (GemmRunner, TN layout, bias epilogue);
// backward through cublasGemmEx (the wrapper has only the TN layout): dX = dY W in bf16, and
// dW += dY^T X, db += dY^T 1 accumulated straight into the fp32 gradients (beta = 1).
// Every launch group is wrapped in a StepRecorder op named as the simulator's ops.
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <memory>
#include <vector>

#include "gpt_layout.h"
#include "step_recorder.h"
#include "trainsim/kernels/device_buffer.h"
#include "trainsim/kernels/gemm.h"

namespace trainsim::trainer {

class GpuModel {
 public:
  // Allocates everything on `device` (made current) for micro-batches of `batch` sequences
  // and `grad_accum` token slots. Throws kernels::CudaError.
  GpuModel(const kernels::ref::GptConfig& cfg, int batch, int grad_accum, int device, int rank);
  ~GpuModel();
  GpuModel(const GpuModel&) = delete;
  GpuModel& operator=(const GpuModel&) = delete;

  void make_current() const;
  [[nodiscard]] int device() const { return device_; }
  [[nodiscard]] cudaStream_t compute() const { return compute_; }
  [[nodiscard]] cudaStream_t comm() const { return comm_; }
  [[nodiscard]] StepRecorder& recorder() { return rec_; }
  [[nodiscard]] float* grads() const { return grads_.get(); }
  // Bytes of every buffer this rank allocated (parameters, optimizer, activations, scratch,
  // the GEMM workspace).
  [[nodiscard]] std::size_t allocated_bytes() const { return allocated_; }

  // Master weights and AdamW moments from the host (fp32, gpt_layout order); the bf16 copy
  // is bf16(master). Synchronous.
  void load_state(const std::vector<float>& master, const std::vector<float>& m, const std::vector<float>& v);
  void download_state(std::vector<float>& master, std::vector<float>& m, std::vector<float>& v) const;
  [[nodiscard]] std::vector<float> download_grads() const;
  // The per-position losses of micro-batch slot `micro` (after the stream has synchronized).
  [[nodiscard]] std::vector<float> download_losses(int micro) const;

  // Copies tokens and targets (batch * seq each) into slot `micro`, asynchronously (the host
  // vectors are copied to pinned memory first, so they may change afterwards).
  void upload_batch(int micro, const std::vector<int>& tokens, const std::vector<int>& targets);

  void zero_grads();
  // Forward and loss of slot `micro`; dlogits = (softmax - onehot) * dloss_scale in place.
  void forward(int micro, float dloss_scale);
  // Backward in three parts so the caller can launch gradient buckets between layers:
  // the head (LM head and final layernorm), each layer from L-1 down to 0, the embedding.
  void backward_head(int micro);
  void backward_layer(int micro, int layer);
  void backward_embedding(int micro);
  void optimizer_step(float lr, int t, float beta1, float beta2, float eps, float weight_decay);

 private:
  using bf16 = __nv_bfloat16;
  // out (N, n) = in (N, k) W^T + b, W (n, k).
  void linear_forward(bf16* out, const bf16* in, std::size_t w, std::size_t b, int n, int k);
  // din = dout W (when din), dW += dout^T in, db += dout^T 1.
  void linear_backward(bf16* din, std::size_t w, std::size_t b, const bf16* dout, const bf16* in, int n, int k);
  template <typename T>
  kernels::DeviceBuffer<T> alloc(std::size_t n);
  const bf16* layer_input(int layer) const;

  kernels::ref::GptConfig cfg_;
  kernels::ref::GptLayout layout_;
  int B_, T_, C_, H_, D_, F_, V_, Vp_, N_, accum_;
  int device_, rank_;
  std::size_t allocated_ = 0;
  cudaStream_t compute_ = nullptr, comm_ = nullptr;
  cublasHandle_t cublas_ = nullptr;
  std::unique_ptr<kernels::GemmRunner> gemm_;
  StepRecorder rec_;

  // parameters and optimizer state (P elements each)
  kernels::DeviceBuffer<float> master_, grads_, m_, v_;
  kernels::DeviceBuffer<bf16> params_;
  // tokens, targets and losses per micro-batch slot
  kernels::DeviceBuffer<int> tokens_, targets_;
  std::vector<int*> pinned_;  // host staging per slot (tokens then targets)
  kernels::DeviceBuffer<float> losses_;
  // saved activations, per layer where indexed by l
  kernels::DeviceBuffer<bf16> x0_, ln1_, qkvr_, atto_, atty_, res2_, ln2_, fch_, fchg_, res3_, lnf_, logits_;
  kernels::DeviceBuffer<float> ln1_stats_, ln2_stats_, lnf_stats_, lse_;  // mean then rstd per row
  // scratch
  kernels::DeviceBuffer<bf16> qkv_, scratch_c_, dres_, dtmp_, dtmp2_, dbig_, dqkvr_, datto_, ones_;
  kernels::DeviceBuffer<unsigned char> ln_ws_, emb_ws_, att_ws_;
};

}  // namespace trainsim::trainer
