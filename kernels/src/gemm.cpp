#include "trainsim/kernels/gemm.h"

#include <cublasLt.h>

#include <memory>
#include <stdexcept>

#include "trainsim/kernels/cuda_check.h"

namespace trainsim::kernels {

namespace {

void check_cublas(cublasStatus_t status, const char* what, const char* file, int line) {
  if (status != CUBLAS_STATUS_SUCCESS)
    throw_cuda_error(what, std::string("cuBLAS status ") + std::to_string(static_cast<int>(status)), file, line);
}
#define TRAINSIM_CUBLAS_CHECK(call) check_cublas((call), #call, __FILE__, __LINE__)

struct Types {
  cudaDataType_t input;
  cudaDataType_t output;
  cublasComputeType_t compute;
};

Types types_of(GemmDtype dtype) {
  switch (dtype) {
    case GemmDtype::kFp32: return {CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F};
    case GemmDtype::kTf32: return {CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32};
    case GemmDtype::kFp16: return {CUDA_R_16F, CUDA_R_16F, CUBLAS_COMPUTE_32F};
    case GemmDtype::kBf16: return {CUDA_R_16BF, CUDA_R_16BF, CUBLAS_COMPUTE_32F};
    case GemmDtype::kFp8:
    case GemmDtype::kFp8Fast: return {CUDA_R_8F_E4M3, CUDA_R_16BF, CUBLAS_COMPUTE_32F};
  }
  throw std::invalid_argument("unknown GEMM dtype");
}

cublasLtEpilogue_t epilogue_of(GemmEpilogue e) {
  switch (e) {
    case GemmEpilogue::kNone: return CUBLASLT_EPILOGUE_DEFAULT;
    case GemmEpilogue::kBias: return CUBLASLT_EPILOGUE_BIAS;
    case GemmEpilogue::kGelu: return CUBLASLT_EPILOGUE_GELU;
    case GemmEpilogue::kBiasGelu: return CUBLASLT_EPILOGUE_GELU_BIAS;
  }
  throw std::invalid_argument("unknown GEMM epilogue");
}

}  // namespace

const char* to_string(GemmDtype dtype) {
  switch (dtype) {
    case GemmDtype::kFp32: return "fp32";
    case GemmDtype::kTf32: return "tf32";
    case GemmDtype::kFp16: return "fp16";
    case GemmDtype::kBf16: return "bf16";
    case GemmDtype::kFp8: return "fp8";
    case GemmDtype::kFp8Fast: return "fp8_fast";
  }
  return "?";
}

GemmDtype parse_gemm_dtype(const std::string& name) {
  for (GemmDtype d : {GemmDtype::kFp32, GemmDtype::kTf32, GemmDtype::kFp16, GemmDtype::kBf16, GemmDtype::kFp8,
                      GemmDtype::kFp8Fast})
    if (name == to_string(d)) return d;
  throw std::invalid_argument("unknown GEMM dtype '" + name +
                              "' (expected fp32, tf32, fp16, bf16, fp8 or fp8_fast)");
}

std::size_t input_element_bytes(GemmDtype dtype) {
  switch (dtype) {
    case GemmDtype::kFp32:
    case GemmDtype::kTf32: return 4;
    case GemmDtype::kFp16:
    case GemmDtype::kBf16: return 2;
    case GemmDtype::kFp8:
    case GemmDtype::kFp8Fast: return 1;
  }
  return 0;
}

bool is_fp8(GemmDtype dtype) { return dtype == GemmDtype::kFp8 || dtype == GemmDtype::kFp8Fast; }

std::size_t output_element_bytes(GemmDtype dtype) {
  return dtype == GemmDtype::kFp32 || dtype == GemmDtype::kTf32 ? 4 : 2;
}

// One case's descriptors and the heuristic's chosen algorithm.
struct GemmRunner::Plan {
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t w = nullptr, a = nullptr, c = nullptr;
  cublasLtMatmulAlgo_t algo{};
  ~Plan() {
    if (c != nullptr) cublasLtMatrixLayoutDestroy(c);
    if (a != nullptr) cublasLtMatrixLayoutDestroy(a);
    if (w != nullptr) cublasLtMatrixLayoutDestroy(w);
    if (op != nullptr) cublasLtMatmulDescDestroy(op);
  }
};

GemmRunner::GemmRunner(std::size_t workspace_bytes, Fp8Scaling fp8_scaling)
    : workspace_bytes_(workspace_bytes), fp8_scaling_(fp8_scaling) {
  cublasLtHandle_t h = nullptr;
  TRAINSIM_CUBLAS_CHECK(cublasLtCreate(&h));
  handle_ = h;
  if (workspace_bytes_ > 0) TRAINSIM_CUDA_CHECK(cudaMalloc(&workspace_, workspace_bytes_));
  if (fp8_scaling_ == Fp8Scaling::kPerTensor) {
    const float one = 1.0F;
    for (float** p : {&a_scale_inv_, &w_scale_inv_}) {
      TRAINSIM_CUDA_CHECK(cudaMalloc(p, sizeof one));
      TRAINSIM_CUDA_CHECK(cudaMemcpy(*p, &one, sizeof one, cudaMemcpyHostToDevice));
    }
  }
}

GemmRunner::~GemmRunner() {
  for (auto& [key, plan] : plans_) delete plan;
  if (workspace_ != nullptr) cudaFree(workspace_);
  if (a_scale_inv_ != nullptr) cudaFree(a_scale_inv_);
  if (w_scale_inv_ != nullptr) cudaFree(w_scale_inv_);
  if (handle_ != nullptr) cublasLtDestroy(static_cast<cublasLtHandle_t>(handle_));
}

std::size_t GemmRunner::library_version() { return cublasLtGetVersion(); }

GemmRunner::Plan& GemmRunner::plan_for(GemmDtype dtype, int m, int n, int k, GemmEpilogue epilogue,
                                       GemmLayout layout) {
  const Key key{static_cast<int>(dtype), m, n, k, static_cast<int>(epilogue), static_cast<int>(layout)};
  if (auto it = plans_.find(key); it != plans_.end()) return *it->second;
  auto plan = std::make_unique<Plan>();
  const Types t = types_of(dtype);
  TRAINSIM_CUBLAS_CHECK(cublasLtMatmulDescCreate(&plan->op, t.compute, CUDA_R_32F));
  // Column-major view of the row-major product C^T (n x m) = op(W) (n x k) * op(A) (k x m),
  // cuBLASLt's A being our W and its B our A. Forward: W stored [n x k] is column-major
  // k x n, transposed; A stored [m x k] is column-major k x m. Data gradient: W stored
  // [k x n] is column-major n x k. Weight gradient: as the data gradient, and A stored
  // [k x m] is column-major m x k, transposed.
  const cublasOperation_t trans_w = layout == GemmLayout::kForward ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t trans_a = layout == GemmLayout::kWeightGradient ? CUBLAS_OP_T : CUBLAS_OP_N;
  TRAINSIM_CUBLAS_CHECK(
      cublasLtMatmulDescSetAttribute(plan->op, CUBLASLT_MATMUL_DESC_TRANSA, &trans_w, sizeof(trans_w)));
  TRAINSIM_CUBLAS_CHECK(
      cublasLtMatmulDescSetAttribute(plan->op, CUBLASLT_MATMUL_DESC_TRANSB, &trans_a, sizeof(trans_a)));
  const cublasLtEpilogue_t epi = epilogue_of(epilogue);
  TRAINSIM_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(plan->op, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof(epi)));
  if (epilogue == GemmEpilogue::kBias || epilogue == GemmEpilogue::kBiasGelu) {
    const cudaDataType_t bias_type = t.output;
    TRAINSIM_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(plan->op, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bias_type,
                                                         sizeof(bias_type)));
  }
  if (is_fp8(dtype)) {
    // Transformer Engine's FP8 GEMM: the operands' inverse scales by device pointer, fast
    // accumulation for the forward pass only (gemm.h).
    if (fp8_scaling_ == Fp8Scaling::kPerTensor) {
      // cuBLASLt's A is our W, its B our activations A.
      const float* w_scale = w_scale_inv_;
      const float* a_scale = a_scale_inv_;
      TRAINSIM_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(plan->op, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &w_scale,
                                                           sizeof(w_scale)));
      TRAINSIM_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(plan->op, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &a_scale,
                                                           sizeof(a_scale)));
    }
    const std::int8_t fast = dtype == GemmDtype::kFp8Fast ? 1 : 0;
    TRAINSIM_CUBLAS_CHECK(
        cublasLtMatmulDescSetAttribute(plan->op, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fast, sizeof(fast)));
  }
  const auto um = static_cast<std::uint64_t>(m), un = static_cast<std::uint64_t>(n),
             uk = static_cast<std::uint64_t>(k);
  if (layout == GemmLayout::kForward)
    TRAINSIM_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&plan->w, t.input, uk, un, static_cast<std::int64_t>(k)));
  else
    TRAINSIM_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&plan->w, t.input, un, uk, static_cast<std::int64_t>(n)));
  if (layout == GemmLayout::kWeightGradient)
    TRAINSIM_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&plan->a, t.input, um, uk, static_cast<std::int64_t>(m)));
  else
    TRAINSIM_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&plan->a, t.input, uk, um, static_cast<std::int64_t>(k)));
  TRAINSIM_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&plan->c, t.output, un, um, static_cast<std::int64_t>(n)));

  cublasLtMatmulPreference_t pref = nullptr;
  TRAINSIM_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&pref));
  const std::size_t ws = workspace_bytes_;
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  cublasStatus_t status =
      cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws));
  if (status == CUBLAS_STATUS_SUCCESS)
    status = cublasLtMatmulAlgoGetHeuristic(static_cast<cublasLtHandle_t>(handle_), plan->op, plan->w, plan->a,
                                            plan->c, plan->c, pref, 1, &result, &found);
  cublasLtMatmulPreferenceDestroy(pref);
  TRAINSIM_CUBLAS_CHECK(status);
  if (found == 0)
    throw CudaError(std::string("cuBLASLt has no algorithm for a ") + to_string(dtype) + " " + to_string(layout) +
                    " GEMM m=" + std::to_string(m) + " n=" + std::to_string(n) + " k=" + std::to_string(k) +
                    " on this GPU (fp8 needs compute capability 8.9 or later, k and n multiples of 16 and the"
                    " forward layout)");
  plan->algo = result.algo;
  Plan& ref = *plan;
  plans_.emplace(key, plan.release());
  return ref;
}

void GemmRunner::run(GemmDtype dtype, int m, int n, int k, const void* a, const void* w, void* c, const void* bias,
                     GemmEpilogue epilogue, cudaStream_t stream, GemmLayout layout) {
  if (m <= 0 || n <= 0 || k <= 0)
    throw std::invalid_argument("GEMM sizes must be positive (m=" + std::to_string(m) + ", n=" + std::to_string(n) +
                                ", k=" + std::to_string(k) + ")");
  if (a == nullptr || w == nullptr || c == nullptr) throw std::invalid_argument("GEMM operand is null");
  const bool needs_bias = epilogue == GemmEpilogue::kBias || epilogue == GemmEpilogue::kBiasGelu;
  if (needs_bias && bias == nullptr) throw std::invalid_argument("GEMM bias epilogue without a bias vector");
  if (layout != GemmLayout::kForward && epilogue != GemmEpilogue::kNone)
    throw std::invalid_argument(std::string("GEMM epilogues run in the forward layout only, not ") +
                                to_string(layout));
  Plan& plan = plan_for(dtype, m, n, k, epilogue, layout);
  if (needs_bias)
    TRAINSIM_CUBLAS_CHECK(
        cublasLtMatmulDescSetAttribute(plan.op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof(bias)));
  const float alpha = 1.0F, beta = 0.0F;
  TRAINSIM_CUBLAS_CHECK(cublasLtMatmul(static_cast<cublasLtHandle_t>(handle_), plan.op, &alpha, w, plan.w, a, plan.a,
                                       &beta, c, plan.c, c, plan.c, &plan.algo, workspace_, workspace_bytes_,
                                       stream));
}

}  // namespace trainsim::kernels
