#pragma once
// 16-byte vector loads and stores of eight bf16 values as fp32, shared by the
// memory-bound kernels (embedding, layernorm, GELU, residual, softmax + CE).
// Pointers must be 16-byte aligned.
#include <cuda_bf16.h>

namespace trainsim::kernels {

__device__ __forceinline__ void load_bf16x8(const __nv_bfloat16* p, float (&f)[8]) {
  const uint4 u = *reinterpret_cast<const uint4*>(p);
  const unsigned w[4] = {u.x, u.y, u.z, u.w};
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    f[2 * i] = __uint_as_float(w[i] << 16);  // bf16 -> fp32 is exact
    f[2 * i + 1] = __uint_as_float(w[i] & 0xffff0000u);
  }
}

// Two floats rounded to bf16 (nearest even), lo in the low half.
__device__ __forceinline__ unsigned pack_bf16x2(float lo, float hi) {
  const __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);
  return static_cast<unsigned>(__bfloat16_as_ushort(h.x)) | (static_cast<unsigned>(__bfloat16_as_ushort(h.y)) << 16);
}

__device__ __forceinline__ void store_bf16x8(__nv_bfloat16* p, const float (&f)[8]) {
  const uint4 u{pack_bf16x2(f[0], f[1]), pack_bf16x2(f[2], f[3]), pack_bf16x2(f[4], f[5]), pack_bf16x2(f[6], f[7])};
  *reinterpret_cast<uint4*>(p) = u;
}

}  // namespace trainsim::kernels
