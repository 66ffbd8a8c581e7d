#include "gpt_model.h"

#include <cublas_v2.h>

#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>

#include "trainer_kernels.h"
#include "trainsim/kernels/attention.h"
#include "trainsim/kernels/cuda_check.h"
#include "trainsim/kernels/elementwise.h"

namespace trainsim::trainer {

namespace {

namespace k = trainsim::kernels;

constexpr std::size_t kNoBias = std::numeric_limits<std::size_t>::max();
// Kernel classes (kKernelClasses order).
constexpr std::size_t kGemm = 0, kAttention = 1, kLayerNorm = 2, kGelu = 3, kResidual = 4, kEmbedding = 5,
                      kLoss = 6, kOptimizer = 7;

void check_cublas(cublasStatus_t status, const char* what, const char* file, int line) {
  if (status != CUBLAS_STATUS_SUCCESS)
    k::throw_cuda_error(what, std::string("cuBLAS status ") + cublasGetStatusName(status), file, line);
}
#define TRAINER_CUBLAS_CHECK(call) check_cublas((call), #call, __FILE__, __LINE__)

std::string layer_op(int layer, const char* op) { return "layer" + std::to_string(layer) + "." + op; }

std::size_t sz(int x) { return static_cast<std::size_t>(x); }

}  // namespace

template <typename T>
k::DeviceBuffer<T> GpuModel::alloc(std::size_t n) {
  allocated_ += n * sizeof(T);
  return k::DeviceBuffer<T>(n);
}

GpuModel::GpuModel(const k::ref::GptConfig& cfg, int batch, int grad_accum, int device, int rank)
    : cfg_(cfg),
      layout_(k::ref::gpt_layout(cfg)),
      B_(batch),
      T_(cfg.seq),
      C_(cfg.hidden),
      H_(cfg.heads),
      D_(cfg.head_dim()),
      F_(cfg.ffn()),
      V_(cfg.vocab),
      Vp_(cfg.padded_vocab),
      N_(batch * cfg.seq),
      accum_(grad_accum),
      device_(device),
      rank_(rank),
      rec_(rank) {
  if (batch <= 0 || grad_accum <= 0) throw std::invalid_argument("GpuModel: batch and grad_accum must be positive");
  k::check_attention_shape(k::AttentionShape{B_, H_, T_, D_});
  make_current();
  TRAINSIM_CUDA_CHECK(cudaStreamCreateWithFlags(&compute_, cudaStreamNonBlocking));
  TRAINSIM_CUDA_CHECK(cudaStreamCreateWithFlags(&comm_, cudaStreamNonBlocking));
  TRAINER_CUBLAS_CHECK(cublasCreate(&cublas_));
  TRAINER_CUBLAS_CHECK(cublasSetStream(cublas_, compute_));
  constexpr std::size_t kGemmWorkspace = std::size_t{64} << 20;
  gemm_ = std::make_unique<k::GemmRunner>(kGemmWorkspace);
  allocated_ += kGemmWorkspace;

  const std::size_t P = layout_.total, L = sz(cfg.layers), N = sz(N_), C = sz(C_), NC = N * C, F = sz(F_);
  master_ = alloc<float>(P);
  grads_ = alloc<float>(P);
  m_ = alloc<float>(P);
  v_ = alloc<float>(P);
  params_ = alloc<bf16>(P);
  tokens_ = alloc<int>(sz(accum_) * N);
  targets_ = alloc<int>(sz(accum_) * N);
  losses_ = alloc<float>(sz(accum_) * N);
  for (int a = 0; a < accum_; ++a) {
    int* host = nullptr;
    TRAINSIM_CUDA_CHECK(cudaMallocHost(reinterpret_cast<void**>(&host), 2 * N * sizeof(int)));
    pinned_.push_back(host);
  }
  x0_ = alloc<bf16>(NC);
  ln1_ = alloc<bf16>(L * NC);
  ln1_stats_ = alloc<float>(L * 2 * N);
  qkvr_ = alloc<bf16>(L * 3 * NC);
  atto_ = alloc<bf16>(L * NC);
  lse_ = alloc<float>(L * N * sz(H_));
  atty_ = alloc<bf16>(L * NC);
  res2_ = alloc<bf16>(L * NC);
  ln2_ = alloc<bf16>(L * NC);
  ln2_stats_ = alloc<float>(L * 2 * N);
  fch_ = alloc<bf16>(L * N * F);
  fchg_ = alloc<bf16>(L * N * F);
  res3_ = alloc<bf16>(L * NC);
  lnf_ = alloc<bf16>(NC);
  lnf_stats_ = alloc<float>(2 * N);
  logits_ = alloc<bf16>(N * sz(Vp_));
  qkv_ = alloc<bf16>(3 * NC);
  scratch_c_ = alloc<bf16>(NC);
  dres_ = alloc<bf16>(NC);
  dtmp_ = alloc<bf16>(NC);
  dtmp2_ = alloc<bf16>(NC);
  dbig_ = alloc<bf16>(N * F);  // F = 4C >= 3C: also holds dqkv
  dqkvr_ = alloc<bf16>(3 * NC);
  datto_ = alloc<bf16>(NC);
  ones_ = alloc<bf16>(N);
  ln_ws_ = alloc<unsigned char>(k::layernorm_backward_workspace_bytes(N_, C_));
  emb_ws_ = alloc<unsigned char>(k::embedding_backward_workspace_bytes(B_, T_, Vp_));
  att_ws_ = alloc<unsigned char>(k::attention_backward_workspace_bytes(k::AttentionShape{B_, H_, T_, D_}));
  fill_bf16(ones_.get(), 1.0f, N, compute_);
  TRAINSIM_CUDA_CHECK(cudaMemsetAsync(grads_.get(), 0, grads_.bytes(), compute_));
  TRAINSIM_CUDA_CHECK(cudaStreamSynchronize(compute_));
}

GpuModel::~GpuModel() {
  cudaSetDevice(device_);
  cudaDeviceSynchronize();
  for (int* p : pinned_) cudaFreeHost(p);
  if (cublas_ != nullptr) cublasDestroy(cublas_);
  if (compute_ != nullptr) cudaStreamDestroy(compute_);
  if (comm_ != nullptr) cudaStreamDestroy(comm_);
}

void GpuModel::make_current() const { TRAINSIM_CUDA_CHECK(cudaSetDevice(device_)); }

void GpuModel::load_state(const std::vector<float>& master, const std::vector<float>& m, const std::vector<float>& v) {
  make_current();
  master_.upload(master);
  m_.upload(m);
  v_.upload(v);
  TRAINSIM_CUDA_CHECK(cudaDeviceSynchronize());
  float_to_bf16(params_.get(), master_.get(), master_.size(), compute_);
  TRAINSIM_CUDA_CHECK(cudaStreamSynchronize(compute_));
}

void GpuModel::download_state(std::vector<float>& master, std::vector<float>& m, std::vector<float>& v) const {
  make_current();
  TRAINSIM_CUDA_CHECK(cudaStreamSynchronize(compute_));
  master = master_.download();
  m = m_.download();
  v = v_.download();
}

std::vector<float> GpuModel::download_grads() const {
  make_current();
  TRAINSIM_CUDA_CHECK(cudaStreamSynchronize(compute_));
  return grads_.download();
}

std::vector<float> GpuModel::download_losses(int micro) const {
  make_current();
  TRAINSIM_CUDA_CHECK(cudaStreamSynchronize(compute_));
  std::vector<float> out(sz(N_));
  TRAINSIM_CUDA_CHECK(cudaMemcpy(out.data(), losses_.get() + sz(micro) * sz(N_), out.size() * sizeof(float),
                                 cudaMemcpyDeviceToHost));
  return out;
}

void GpuModel::upload_batch(int micro, const std::vector<int>& tokens, const std::vector<int>& targets) {
  const std::size_t N = sz(N_);
  if (micro < 0 || micro >= accum_ || tokens.size() != N || targets.size() != N)
    throw std::invalid_argument("GpuModel::upload_batch: slot out of range or not batch * seq tokens");
  make_current();
  int* host = pinned_[sz(micro)];
  std::memcpy(host, tokens.data(), N * sizeof(int));
  std::memcpy(host + N, targets.data(), N * sizeof(int));
  TRAINSIM_CUDA_CHECK(cudaMemcpyAsync(tokens_.get() + sz(micro) * N, host, N * sizeof(int), cudaMemcpyHostToDevice,
                                      compute_));
  TRAINSIM_CUDA_CHECK(cudaMemcpyAsync(targets_.get() + sz(micro) * N, host + N, N * sizeof(int),
                                      cudaMemcpyHostToDevice, compute_));
}

void GpuModel::zero_grads() {
  make_current();
  OpScope s(rec_, compute_, kOptimizer, "compute", "optimizer", "zero_grad");
  TRAINSIM_CUDA_CHECK(cudaMemsetAsync(grads_.get(), 0, grads_.bytes(), compute_));
}

void GpuModel::linear_forward(bf16* out, const bf16* in, std::size_t w, std::size_t b, int n, int kdim) {
  gemm_->run(k::GemmDtype::kBf16, N_, n, kdim, in, params_.get() + w, out, b == kNoBias ? nullptr : params_.get() + b,
             b == kNoBias ? k::GemmEpilogue::kNone : k::GemmEpilogue::kBias, compute_);
}

void GpuModel::linear_backward(bf16* din, std::size_t w, std::size_t b, const bf16* dout, const bf16* in, int n,
                               int kdim) {
  // Row-major X (N, k), W (n, k), dY (N, n) are column-major X^T, W^T, dY^T.
  const float one = 1.0f, zero = 0.0f;
  if (din != nullptr)  // dX^T (k x N) = W^T (k x n) dY^T (n x N)
    TRAINER_CUBLAS_CHECK(cublasGemmEx(cublas_, CUBLAS_OP_N, CUBLAS_OP_N, kdim, N_, n, &one, params_.get() + w,
                                      CUDA_R_16BF, kdim, dout, CUDA_R_16BF, n, &zero, din, CUDA_R_16BF, kdim,
                                      CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  // dW^T (k x n) += X^T (k x N) dY (N x n), into the fp32 gradients.
  TRAINER_CUBLAS_CHECK(cublasGemmEx(cublas_, CUBLAS_OP_N, CUBLAS_OP_T, kdim, n, N_, &one, in, CUDA_R_16BF, kdim, dout,
                                    CUDA_R_16BF, n, &one, grads_.get() + w, CUDA_R_32F, kdim, CUBLAS_COMPUTE_32F,
                                    CUBLAS_GEMM_DEFAULT));
  if (b != kNoBias)  // db (n x 1) += dY^T (n x N) 1 (N x 1)
    TRAINER_CUBLAS_CHECK(cublasGemmEx(cublas_, CUBLAS_OP_N, CUBLAS_OP_N, n, 1, N_, &one, dout, CUDA_R_16BF, n,
                                      ones_.get(), CUDA_R_16BF, N_, &one, grads_.get() + b, CUDA_R_32F, n,
                                      CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

const GpuModel::bf16* GpuModel::layer_input(int layer) const {
  return layer == 0 ? x0_.get() : res3_.get() + sz(layer - 1) * sz(N_) * sz(C_);
}

void GpuModel::forward(int micro, float dloss_scale) {
  make_current();
  const std::size_t N = sz(N_), NC = N * sz(C_), NF = N * sz(F_);
  const int* tok = tokens_.get() + sz(micro) * N;
  const int* tgt = targets_.get() + sz(micro) * N;
  bf16* P = params_.get();
  const k::AttentionShape shape{B_, H_, T_, D_};
  {
    OpScope s(rec_, compute_, kEmbedding, "compute", "forward", "embedding", micro);
    k::embedding_forward(x0_.get(), tok, P + layout_.wte, P + layout_.wpe, B_, T_, C_, Vp_, compute_);
  }
  for (int l = 0; l < cfg_.layers; ++l) {
    const k::ref::LayerOffsets& o = layout_.layer[sz(l)];
    const std::size_t ul = sz(l);
    const bf16* in = layer_input(l);
    bf16* ln1 = ln1_.get() + ul * NC;
    float* st1 = ln1_stats_.get() + ul * 2 * N;
    bf16* q = qkvr_.get() + ul * 3 * NC;
    bf16* ao = atto_.get() + ul * NC;
    float* lse = lse_.get() + ul * N * sz(H_);
    bf16* ay = atty_.get() + ul * NC;
    bf16* r2 = res2_.get() + ul * NC;
    bf16* ln2 = ln2_.get() + ul * NC;
    float* st2 = ln2_stats_.get() + ul * 2 * N;
    bf16* fc = fch_.get() + ul * NF;
    bf16* fg = fchg_.get() + ul * NF;
    {
      OpScope s(rec_, compute_, kLayerNorm, "compute", "forward", layer_op(l, "input_norm"), micro, l);
      k::layernorm_forward(ln1, st1, st1 + N, in, P + o.ln1_w, P + o.ln1_b, N_, C_, compute_);
    }
    {
      OpScope s(rec_, compute_, kGemm, "compute", "forward", layer_op(l, "qkv_proj"), micro, l);
      linear_forward(qkv_.get(), ln1, o.qkv_w, o.qkv_b, 3 * C_, C_);
    }
    {
      OpScope s(rec_, compute_, kAttention, "compute", "forward", layer_op(l, "attention"), micro, l);
      permute_qkv(q, q + NC, q + 2 * NC, qkv_.get(), B_, T_, H_, D_, compute_);
      k::attention_forward(q, q + NC, q + 2 * NC, ao, lse, shape, compute_);
      heads_to_rows(ay, ao, B_, T_, H_, D_, compute_);
    }
    {
      OpScope s(rec_, compute_, kGemm, "compute", "forward", layer_op(l, "attn_out_proj"), micro, l);
      linear_forward(scratch_c_.get(), ay, o.proj_w, o.proj_b, C_, C_);
    }
    {
      OpScope s(rec_, compute_, kResidual, "compute", "forward", layer_op(l, "attn_residual"), micro, l);
      k::residual_forward(r2, in, scratch_c_.get(), NC, compute_);
    }
    {
      OpScope s(rec_, compute_, kLayerNorm, "compute", "forward", layer_op(l, "post_attn_norm"), micro, l);
      k::layernorm_forward(ln2, st2, st2 + N, r2, P + o.ln2_w, P + o.ln2_b, N_, C_, compute_);
    }
    {
      OpScope s(rec_, compute_, kGemm, "compute", "forward", layer_op(l, "mlp_up"), micro, l);
      linear_forward(fc, ln2, o.fc_w, o.fc_b, F_, C_);
    }
    {
      OpScope s(rec_, compute_, kGelu, "compute", "forward", layer_op(l, "mlp_act"), micro, l);
      k::gelu_forward(fg, fc, NF, compute_);
    }
    {
      OpScope s(rec_, compute_, kGemm, "compute", "forward", layer_op(l, "mlp_down"), micro, l);
      linear_forward(scratch_c_.get(), fg, o.fcproj_w, o.fcproj_b, C_, F_);
    }
    {
      OpScope s(rec_, compute_, kResidual, "compute", "forward", layer_op(l, "mlp_residual"), micro, l);
      k::residual_forward(res3_.get() + ul * NC, r2, scratch_c_.get(), NC, compute_);
    }
  }
  const bf16* last = layer_input(cfg_.layers);
  {
    OpScope s(rec_, compute_, kLayerNorm, "compute", "forward", "final_norm", micro);
    k::layernorm_forward(lnf_.get(), lnf_stats_.get(), lnf_stats_.get() + N, last, P + layout_.lnf_w,
                         P + layout_.lnf_b, N_, C_, compute_);
  }
  {
    OpScope s(rec_, compute_, kGemm, "compute", "forward", "output_layer", micro);
    linear_forward(logits_.get(), lnf_.get(), layout_.wte, kNoBias, Vp_, C_);
  }
  {
    OpScope s(rec_, compute_, kLoss, "compute", "forward", "loss", micro);
    k::softmax_cross_entropy(losses_.get() + sz(micro) * N, logits_.get(), logits_.get(), tgt, N_, V_, Vp_,
                             dloss_scale, compute_);
  }
}

void GpuModel::backward_head(int micro) {
  make_current();
  const std::size_t N = sz(N_);
  {
    OpScope s(rec_, compute_, kGemm, "compute", "backward", "output_layer.backward", micro);
    linear_backward(dtmp_.get(), layout_.wte, kNoBias, logits_.get(), lnf_.get(), Vp_, C_);
  }
  {
    OpScope s(rec_, compute_, kLayerNorm, "compute", "backward", "final_norm.backward", micro);
    k::layernorm_backward(dres_.get(), grads_.get() + layout_.lnf_w, grads_.get() + layout_.lnf_b, dtmp_.get(),
                          layer_input(cfg_.layers), params_.get() + layout_.lnf_w, lnf_stats_.get(),
                          lnf_stats_.get() + N, ln_ws_.get(), ln_ws_.size(), N_, C_, compute_);
  }
}

void GpuModel::backward_layer(int micro, int l) {
  make_current();
  const std::size_t N = sz(N_), NC = N * sz(C_), NF = N * sz(F_), ul = sz(l);
  const k::ref::LayerOffsets& o = layout_.layer[ul];
  const bf16* P = params_.get();
  float* G = grads_.get();
  const bf16* in = layer_input(l);
  const bf16* q = qkvr_.get() + ul * 3 * NC;
  const float* st1 = ln1_stats_.get() + ul * 2 * N;
  const float* st2 = ln2_stats_.get() + ul * 2 * N;
  bf16* dq = dqkvr_.get();
  {
    OpScope s(rec_, compute_, kGemm, "compute", "backward", layer_op(l, "mlp_down.backward"), micro, l);
    linear_backward(dbig_.get(), o.fcproj_w, o.fcproj_b, dres_.get(), fchg_.get() + ul * NF, C_, F_);
  }
  {
    OpScope s(rec_, compute_, kGelu, "compute", "backward", layer_op(l, "mlp_act.backward"), micro, l);
    k::gelu_backward(dbig_.get(), fch_.get() + ul * NF, dbig_.get(), NF, compute_);
  }
  {
    OpScope s(rec_, compute_, kGemm, "compute", "backward", layer_op(l, "mlp_up.backward"), micro, l);
    linear_backward(dtmp_.get(), o.fc_w, o.fc_b, dbig_.get(), ln2_.get() + ul * NC, F_, C_);
  }
  {
    OpScope s(rec_, compute_, kLayerNorm, "compute", "backward", layer_op(l, "post_attn_norm.backward"), micro, l);
    k::layernorm_backward(dtmp2_.get(), G + o.ln2_w, G + o.ln2_b, dtmp_.get(), res2_.get() + ul * NC, P + o.ln2_w,
                          st2, st2 + N, ln_ws_.get(), ln_ws_.size(), N_, C_, compute_);
  }
  {
    OpScope s(rec_, compute_, kResidual, "compute", "backward", layer_op(l, "mlp_residual.backward"), micro, l);
    k::residual_forward(dres_.get(), dres_.get(), dtmp2_.get(), NC, compute_);
  }
  {
    OpScope s(rec_, compute_, kGemm, "compute", "backward", layer_op(l, "attn_out_proj.backward"), micro, l);
    linear_backward(dtmp_.get(), o.proj_w, o.proj_b, dres_.get(), atty_.get() + ul * NC, C_, C_);
  }
  {
    OpScope s(rec_, compute_, kAttention, "compute", "backward", layer_op(l, "attention.backward"), micro, l);
    rows_to_heads(datto_.get(), dtmp_.get(), B_, T_, H_, D_, compute_);
    k::attention_backward(q, q + NC, q + 2 * NC, atto_.get() + ul * NC, datto_.get(), lse_.get() + ul * N * sz(H_),
                          dq, dq + NC, dq + 2 * NC, att_ws_.get(), k::AttentionShape{B_, H_, T_, D_}, compute_);
    unpermute_qkv(dbig_.get(), dq, dq + NC, dq + 2 * NC, B_, T_, H_, D_, compute_);
  }
  {
    OpScope s(rec_, compute_, kGemm, "compute", "backward", layer_op(l, "qkv_proj.backward"), micro, l);
    linear_backward(dtmp_.get(), o.qkv_w, o.qkv_b, dbig_.get(), ln1_.get() + ul * NC, 3 * C_, C_);
  }
  {
    OpScope s(rec_, compute_, kLayerNorm, "compute", "backward", layer_op(l, "input_norm.backward"), micro, l);
    k::layernorm_backward(dtmp2_.get(), G + o.ln1_w, G + o.ln1_b, dtmp_.get(), in, P + o.ln1_w, st1, st1 + N,
                          ln_ws_.get(), ln_ws_.size(), N_, C_, compute_);
  }
  {
    OpScope s(rec_, compute_, kResidual, "compute", "backward", layer_op(l, "attn_residual.backward"), micro, l);
    k::residual_forward(dres_.get(), dres_.get(), dtmp2_.get(), NC, compute_);
  }
}

void GpuModel::backward_embedding(int micro) {
  make_current();
  const std::size_t N = sz(N_);
  OpScope s(rec_, compute_, kEmbedding, "compute", "backward", "embedding.backward", micro);
  k::embedding_backward(grads_.get() + layout_.wte, grads_.get() + layout_.wpe, dres_.get(),
                        tokens_.get() + sz(micro) * N, emb_ws_.get(), emb_ws_.size(), B_, T_, C_, Vp_, compute_);
}

void GpuModel::optimizer_step(float lr, int t, float beta1, float beta2, float eps, float weight_decay) {
  make_current();
  OpScope s(rec_, compute_, kOptimizer, "compute", "optimizer", "optimizer");
  k::adamw_step(master_.get(), params_.get(), m_.get(), v_.get(), grads_.get(), master_.size(), lr, beta1, beta2, eps,
                weight_decay, t, compute_);
}

}  // namespace trainsim::trainer
