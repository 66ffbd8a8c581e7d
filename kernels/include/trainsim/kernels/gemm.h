#pragma once
// cuBLASLt GEMM wrapper: C[m x n] = A[m x k] W^T (+ bias[n]) (then GELU), row-major,
// with W stored [n x k] as a linear layer's weight (the "TN" layout cuBLASLt needs for
// fp8). The two backward layouts of a linear layer run too (gemm_layout.h: data
// gradient, cuBLAS "NN"; weight gradient, "NT"), with the same buffer sizes. One handle and one workspace per GemmRunner; the heuristic's algorithm is
// cached per (dtype, shape, epilogue). Accumulation is always fp32.
//
// dtype   A, W                C, bias          compute
// fp32    float               float            fp32
// tf32    float               float            fp32 with tf32 tensor cores
// fp16    __half              __half           fp32
// bf16    __nv_bfloat16       __nv_bfloat16    fp32
// fp8     __nv_fp8_e4m3       __nv_bfloat16    fp32 (Hopper and later)
// fp8_fast  as fp8, with cuBLASLt's fast accumulation (CUBLASLT_MATMUL_DESC_FAST_ACCUM)
//
// FP8 as Transformer Engine runs it: per-tensor scales, passed to cuBLASLt as device
// pointers to the inverse scales of A and W (CUBLASLT_MATMUL_DESC_A/B_SCALE_POINTER;
// this runner's are 1, each in its own allocation: cuBLASLt wants its device pointers
// aligned). Fp8Scaling::kNone leaves the pointers unset (cuBLASLt's implicit 1). TE's forward GEMMs use fast accumulation, its gradient GEMMs
// the default promoted fp32 accumulation (TE's use_split_accumulator), so "fp8" prices
// backward GEMMs and "fp8_fast" forward ones.
#include <cuda_runtime.h>

#include <cstddef>
#include <map>
#include <string>
#include <tuple>

#include "trainsim/kernels/gemm_layout.h"

namespace trainsim::kernels {

enum class GemmDtype { kFp32, kTf32, kFp16, kBf16, kFp8, kFp8Fast };
enum class GemmEpilogue { kNone, kBias, kGelu, kBiasGelu };
enum class Fp8Scaling { kPerTensor, kNone };

[[nodiscard]] const char* to_string(GemmDtype dtype);
// "fp32", "tf32", "fp16", "bf16", "fp8", "fp8_fast"; throws std::invalid_argument otherwise.
[[nodiscard]] GemmDtype parse_gemm_dtype(const std::string& name);
// Bytes of one element of A and W, and of C.
[[nodiscard]] std::size_t input_element_bytes(GemmDtype dtype);
[[nodiscard]] std::size_t output_element_bytes(GemmDtype dtype);
[[nodiscard]] bool is_fp8(GemmDtype dtype);

class GemmRunner {
 public:
  explicit GemmRunner(std::size_t workspace_bytes = std::size_t{64} << 20,
                      Fp8Scaling fp8_scaling = Fp8Scaling::kPerTensor);
  ~GemmRunner();
  GemmRunner(const GemmRunner&) = delete;
  GemmRunner& operator=(const GemmRunner&) = delete;

  // Throws std::invalid_argument for non-positive sizes or null pointers, and
  // CudaError when cuBLASLt has no algorithm for the case or a call fails. `w` is the
  // second operand (B) in the backward layouts, which take no epilogue.
  void run(GemmDtype dtype, int m, int n, int k, const void* a, const void* w, void* c, const void* bias,
           GemmEpilogue epilogue, cudaStream_t stream, GemmLayout layout = GemmLayout::kForward);

  // cuBLASLt's version number (cublasLtGetVersion()).
  [[nodiscard]] static std::size_t library_version();

 private:
  struct Plan;
  using Key = std::tuple<int, int, int, int, int, int>;
  Plan& plan_for(GemmDtype dtype, int m, int n, int k, GemmEpilogue epilogue, GemmLayout layout);

  void* handle_ = nullptr;  // cublasLtHandle_t
  void* workspace_ = nullptr;
  std::size_t workspace_bytes_ = 0;
  Fp8Scaling fp8_scaling_ = Fp8Scaling::kPerTensor;
  float* a_scale_inv_ = nullptr;  // device: 1
  float* w_scale_inv_ = nullptr;  // device: 1
  std::map<Key, Plan*> plans_;
};

}  // namespace trainsim::kernels
