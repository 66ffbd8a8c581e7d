// AdamW step on fp32 master weights, writing the bf16 compute copy; see elementwise.h.
// The update follows torch.optim.AdamW (decoupled weight decay, Loshchilov & Hutter 2019;
// bias correction of Kingma & Ba 2015, Algorithm 1). Grid-stride over float4 vectors when
// the fp32 tensors are 16-byte and the bf16 copy 8-byte aligned, element by element else.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "launch_checks.h"
#include "trainsim/kernels/cuda_check.h"
#include "trainsim/kernels/elementwise.h"
#include "bf16x8.cuh"

namespace trainsim::kernels {
namespace {

using launch::require;
using launch::aligned;

constexpr int kThreads = 256;
constexpr std::size_t kMaxBlocks = 4096;  // grid-stride beyond 1M threads (H200: 270K resident)

struct AdamWCoefficients {
  float lr, beta1, beta2, eps, weight_decay;
  float bias_correction1;  // 1 - beta1^step
  float bias_correction2;  // 1 - beta2^step
};

// Updates one parameter; returns the new master value.
__device__ __forceinline__ float adamw_update(float p, float g, float& m, float& v, const AdamWCoefficients& k) {
  m = k.beta1 * m + (1.0f - k.beta1) * g;
  v = k.beta2 * v + (1.0f - k.beta2) * g * g;
  p -= k.lr * k.weight_decay * p;
  const float m_hat = m / k.bias_correction1;
  const float v_hat = v / k.bias_correction2;
  return p - k.lr * m_hat / (sqrtf(v_hat) + k.eps);
}

template <bool kVectors>
__global__ void __launch_bounds__(kThreads) adamw_kernel(float* params,               // (n)
                                                         __nv_bfloat16* params_bf16,  // (n)
                                                         float* m,                    // (n)
                                                         float* v,                    // (n)
                                                         const float* grads,          // (n)
                                                         std::size_t n, AdamWCoefficients k) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  const std::size_t tid = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  std::size_t scalar_begin = 0;
  if constexpr (kVectors) {
    const std::size_t vecs = n / 4;
    for (std::size_t i = tid; i < vecs; i += stride) {
      float4 p = reinterpret_cast<const float4*>(params)[i];
      const float4 g = reinterpret_cast<const float4*>(grads)[i];
      float4 mi = reinterpret_cast<const float4*>(m)[i];
      float4 vi = reinterpret_cast<const float4*>(v)[i];
      p.x = adamw_update(p.x, g.x, mi.x, vi.x, k);
      p.y = adamw_update(p.y, g.y, mi.y, vi.y, k);
      p.z = adamw_update(p.z, g.z, mi.z, vi.z, k);
      p.w = adamw_update(p.w, g.w, mi.w, vi.w, k);
      reinterpret_cast<float4*>(params)[i] = p;
      reinterpret_cast<float4*>(m)[i] = mi;
      reinterpret_cast<float4*>(v)[i] = vi;
      reinterpret_cast<uint2*>(params_bf16)[i] = make_uint2(pack_bf16x2(p.x, p.y), pack_bf16x2(p.z, p.w));
    }
    scalar_begin = vecs * 4;
  }
  for (std::size_t i = scalar_begin + tid; i < n; i += stride) {
    float mi = m[i];
    float vi = v[i];
    const float p = adamw_update(params[i], grads[i], mi, vi, k);
    params[i] = p;
    m[i] = mi;
    v[i] = vi;
    params_bf16[i] = __float2bfloat16_rn(p);
  }
}

unsigned flat_blocks(std::size_t work) { return launch::flat_blocks(work, kThreads, kMaxBlocks); }

}  // namespace

void adamw_step(float* params, __nv_bfloat16* params_bf16, float* m, float* v, const float* grads, std::size_t n,
                float lr, float beta1, float beta2, float eps, float weight_decay, int step, cudaStream_t stream) {
  constexpr const char* what = "adamw_step";
  require(n > 0, what, "n must be positive, got 0");
  require(params != nullptr, what, "params is null");
  require(params_bf16 != nullptr, what, "params_bf16 is null");
  require(m != nullptr, what, "m is null");
  require(v != nullptr, what, "v is null");
  require(grads != nullptr, what, "grads is null");
  require(step >= 1, what, "step must be >= 1 (bias correction), got " + std::to_string(step));
  require(std::isfinite(lr) && lr >= 0.0f, what, "lr must be finite and >= 0, got " + std::to_string(lr));
  require(beta1 >= 0.0f && beta1 < 1.0f, what, "beta1 must be in [0, 1), got " + std::to_string(beta1));
  require(beta2 >= 0.0f && beta2 < 1.0f, what, "beta2 must be in [0, 1), got " + std::to_string(beta2));
  require(eps >= 0.0f, what, "eps must be >= 0, got " + std::to_string(eps));
  require(std::isfinite(weight_decay) && weight_decay >= 0.0f, what,
          "weight_decay must be finite and >= 0, got " + std::to_string(weight_decay));
  // The bias corrections once per step, in double on the host.
  const AdamWCoefficients k{lr,
                            beta1,
                            beta2,
                            eps,
                            weight_decay,
                            static_cast<float>(1.0 - std::pow(static_cast<double>(beta1), step)),
                            static_cast<float>(1.0 - std::pow(static_cast<double>(beta2), step))};
  if (aligned(params, 16) && aligned(m, 16) && aligned(v, 16) && aligned(grads, 16) && aligned(params_bf16, 8))
    adamw_kernel<true><<<flat_blocks(n / 4), kThreads, 0, stream>>>(params, params_bf16, m, v, grads, n, k);
  else
    adamw_kernel<false><<<flat_blocks(n), kThreads, 0, stream>>>(params, params_bf16, m, v, grads, n, k);
  TRAINSIM_CUDA_CHECK(cudaGetLastError());
}

}  // namespace trainsim::kernels
