#pragma once
// FP8 casts with per-tensor scaling, as Transformer Engine's delayed-scaling recipe runs
// them before every FP8 GEMM (kernels/src/fp8_cast.cu; CPU reference in
// kernels/reference/fp8_ref.h):
//   out[i] = fp8(in[i] * scale)      round to nearest even, saturating to the largest
//                                    finite value (E4M3 448, E5M2 57344), as cvt.rn.satfinite
//   amax   = max(amax, max_i |in[i]|) the history the next step's scale is derived from
// E4M3 (forward activations and weights) and E5M2 (gradients) are the OCP FP8 formats
// (Micikevicius et al. 2022, "FP8 Formats for Deep Learning"). `scale` and `amax` are
// device pointers, so a step can update them without a host round trip; amax must hold
// a value >= 0 before the launch (0 to start a new history). A NaN input gives NaN out
// and leaves amax alone.
//
// Every launcher is asynchronous on `stream`, throws std::invalid_argument for a null
// pointer or a non-positive size before launching anything, and CudaError when the launch
// fails. amax is the one float atomic (atomicMax on its bits, exact: max is order-free),
// so results are bitwise deterministic.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstddef>

namespace trainsim::kernels {

enum class Fp8Format { kE4M3, kE5M2 };

// n elements, any alignment (16-byte vectors when in and out allow).
void fp8_cast(void* out,                 // (n) fp8 bytes
              float* amax,               // (1), max-accumulated
              const __nv_bfloat16* in,   // (n)
              const float* scale,        // (1)
              std::size_t n, Fp8Format format, cudaStream_t stream);

// The cast and its transpose in one pass (Transformer Engine's cast_transpose): the FP8
// copy a backward GEMM reads in the "TN" layout cuBLASLt requires for FP8 operands.
//   out[r * cols + c] = out_t[c * rows + r] = fp8(in[r * cols + c] * scale)
void fp8_cast_transpose(void* out,                // (rows, cols) fp8 bytes
                        void* out_t,              // (cols, rows) fp8 bytes
                        float* amax,              // (1), max-accumulated
                        const __nv_bfloat16* in,  // (rows, cols)
                        const float* scale,       // (1)
                        int rows, int cols, Fp8Format format, cudaStream_t stream);

}  // namespace trainsim::kernels
