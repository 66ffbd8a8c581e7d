// The cuBLASLt wrapper against the CPU reference on fresh random inputs.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "gemm_ref.h"
#include "gpu_available.h"
#include "trainsim/kernels/device_buffer.h"
#include "trainsim/kernels/gemm.h"

namespace {

using trainsim::kernels::DeviceBuffer;
using trainsim::kernels::GemmDtype;
using trainsim::kernels::GemmEpilogue;
using trainsim::kernels::GemmLayout;
using trainsim::kernels::Fp8Scaling;
using trainsim::kernels::GemmRunner;

// Values exactly representable in the input type, so the reference sees what the GPU sees.
std::vector<float> random_values(std::size_t count, std::mt19937& rng, GemmDtype dtype) {
  std::normal_distribution<float> dist(0.0F, 1.0F);
  std::vector<float> v(count);
  for (float& x : v) {
    const float r = dist(rng);
    switch (dtype) {
      case GemmDtype::kBf16: x = __bfloat162float(__float2bfloat16(r)); break;
      case GemmDtype::kFp16: x = __half2float(__float2half(r)); break;
      case GemmDtype::kFp8:
      case GemmDtype::kFp8Fast: x = static_cast<float>(__nv_fp8_e4m3(r)); break;
      default: x = r;
    }
  }
  return v;
}

// Uploads floats as the dtype's input (or output, for bias) element type.
DeviceBuffer<std::uint8_t> upload_as(const std::vector<float>& v, GemmDtype dtype, bool output_type) {
  const std::size_t elem = output_type ? trainsim::kernels::output_element_bytes(dtype)
                                       : trainsim::kernels::input_element_bytes(dtype);
  std::vector<std::uint8_t> bytes(v.size() * elem);
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (elem == 4) {
      std::memcpy(&bytes[i * 4], &v[i], 4);
    } else if (elem == 2) {
      const bool half = dtype == GemmDtype::kFp16;
      if (half) {
        const __half h = __float2half(v[i]);
        std::memcpy(&bytes[i * 2], &h, 2);
      } else {
        const __nv_bfloat16 b = __float2bfloat16(v[i]);
        std::memcpy(&bytes[i * 2], &b, 2);
      }
    } else {
      const __nv_fp8_e4m3 f(v[i]);
      std::memcpy(&bytes[i], &f, 1);
    }
  }
  DeviceBuffer<std::uint8_t> d(bytes.size());
  d.upload(bytes);
  return d;
}

std::vector<double> download_output(const DeviceBuffer<std::uint8_t>& d, GemmDtype dtype) {
  const std::vector<std::uint8_t> bytes = d.download();
  const std::size_t elem = trainsim::kernels::output_element_bytes(dtype);
  std::vector<double> out(bytes.size() / elem);
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (elem == 4) {
      float f = 0.0F;
      std::memcpy(&f, &bytes[i * 4], 4);
      out[i] = static_cast<double>(f);
    } else if (dtype == GemmDtype::kFp16) {
      __half h;
      std::memcpy(&h, &bytes[i * 2], 2);
      out[i] = static_cast<double>(__half2float(h));
    } else {
      __nv_bfloat16 b;
      std::memcpy(&b, &bytes[i * 2], 2);
      out[i] = static_cast<double>(__bfloat162float(b));
    }
  }
  return out;
}

double relative_error(const std::vector<double>& out, const std::vector<double>& ref) {
  double num = 0.0, den = 0.0;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    if (!std::isfinite(out[i])) return INFINITY;
    num += (out[i] - ref[i]) * (out[i] - ref[i]);
    den += ref[i] * ref[i];
  }
  return std::sqrt(num / den);
}

struct Case {
  GemmDtype dtype;
  int m, n, k;
  GemmEpilogue epilogue;
  double tolerance;
};

class GemmWrapper : public ::testing::TestWithParam<Case> {};

// Readable, stable test names: bf16_512x768x256_bias.
std::string case_name(const ::testing::TestParamInfo<Case>& param) {
  static const char* const kEpilogues[] = {"none", "bias", "gelu", "bias_gelu"};
  const Case& c = param.param;
  return std::string(trainsim::kernels::to_string(c.dtype)) + "_" + std::to_string(c.m) + "x" + std::to_string(c.n) +
         "x" + std::to_string(c.k) + "_" + kEpilogues[static_cast<int>(c.epilogue)];
}

TEST_P(GemmWrapper, MatchesCpuReference) {
  TRAINSIM_REQUIRE_GPU();
  const Case c = GetParam();
  if (trainsim::kernels::is_fp8(c.dtype)) {
    cudaDeviceProp prop{};
    ASSERT_EQ(cudaGetDeviceProperties(&prop, 0), cudaSuccess);
    if (prop.major * 10 + prop.minor < 89) GTEST_SKIP() << "fp8 GEMMs need compute capability 8.9 or later";
  }
  const unsigned seed = std::random_device{}();
  std::mt19937 rng(seed);
  SCOPED_TRACE("seed " + std::to_string(seed));
  const auto um = static_cast<std::size_t>(c.m), un = static_cast<std::size_t>(c.n),
             uk = static_cast<std::size_t>(c.k);
  const std::vector<float> a = random_values(um * uk, rng, c.dtype);
  const std::vector<float> w = random_values(un * uk, rng, c.dtype);
  const bool has_bias = c.epilogue == GemmEpilogue::kBias || c.epilogue == GemmEpilogue::kBiasGelu;
  const bool gelu = c.epilogue == GemmEpilogue::kGelu || c.epilogue == GemmEpilogue::kBiasGelu;
  std::vector<float> bias;
  if (has_bias) bias = random_values(un, rng, trainsim::kernels::is_fp8(c.dtype) ? GemmDtype::kBf16 : c.dtype);

  auto da = upload_as(a, c.dtype, false);
  auto dw = upload_as(w, c.dtype, false);
  DeviceBuffer<std::uint8_t> dbias;
  if (has_bias) dbias = upload_as(bias, c.dtype, true);
  DeviceBuffer<std::uint8_t> dc(um * un * trainsim::kernels::output_element_bytes(c.dtype));
  const std::vector<double> ref = trainsim::kernels::ref::linear(c.m, c.n, c.k, a, w, bias, gelu);
  // fp8: with Transformer Engine's per-tensor scale pointers and without them.
  std::vector<Fp8Scaling> scalings{Fp8Scaling::kPerTensor};
  if (trainsim::kernels::is_fp8(c.dtype)) scalings.push_back(Fp8Scaling::kNone);
  for (Fp8Scaling scaling : scalings) {
    SCOPED_TRACE(scaling == Fp8Scaling::kPerTensor ? "per-tensor scale pointers" : "no scale pointers");
    dc.fill_bytes(0xFF);  // NaN in every output type: unwritten elements fail
    GemmRunner runner(std::size_t{64} << 20, scaling);
    try {
      runner.run(c.dtype, c.m, c.n, c.k, da.get(), dw.get(), dc.get(), has_bias ? dbias.get() : nullptr, c.epilogue,
                 nullptr);
    } catch (const trainsim::kernels::CudaError& e) {
      ADD_FAILURE() << e.what();
      continue;
    }
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    const double err = relative_error(download_output(dc, c.dtype), ref);
    EXPECT_LT(err, c.tolerance) << trainsim::kernels::to_string(c.dtype) << " m=" << c.m << " n=" << c.n
                                << " k=" << c.k;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Dtypes, GemmWrapper,
    ::testing::Values(Case{GemmDtype::kFp32, 128, 96, 64, GemmEpilogue::kNone, 1e-5},
                      Case{GemmDtype::kTf32, 256, 192, 128, GemmEpilogue::kNone, 2e-3},
                      Case{GemmDtype::kFp16, 200, 136, 72, GemmEpilogue::kBias, 2e-3},
                      Case{GemmDtype::kBf16, 512, 768, 256, GemmEpilogue::kNone, 1e-2},
                      Case{GemmDtype::kBf16, 333, 520, 200, GemmEpilogue::kBias, 1e-2},
                      Case{GemmDtype::kBf16, 256, 1024, 384, GemmEpilogue::kBiasGelu, 1e-2},
                      Case{GemmDtype::kBf16, 128, 256, 64, GemmEpilogue::kGelu, 1e-2},
                      Case{GemmDtype::kFp8, 256, 512, 256, GemmEpilogue::kNone, 1e-2},
                      Case{GemmDtype::kFp8Fast, 256, 512, 256, GemmEpilogue::kNone, 1e-2}),
    case_name);

// The backward layouts: data gradient C = A B (B stored [k x n]) and weight gradient
// C = A^T B (A stored [k x m]), against the forward reference on transposed copies.
struct LayoutCase {
  GemmDtype dtype;
  GemmLayout layout;
  int m, n, k;
};

class GemmLayouts : public ::testing::TestWithParam<LayoutCase> {};

std::vector<float> transposed(const std::vector<float>& v, int rows, int cols) {
  std::vector<float> t(v.size());
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c)
      t[static_cast<std::size_t>(c) * static_cast<std::size_t>(rows) + static_cast<std::size_t>(r)] =
          v[static_cast<std::size_t>(r) * static_cast<std::size_t>(cols) + static_cast<std::size_t>(c)];
  return t;
}

TEST_P(GemmLayouts, MatchesCpuReference) {
  TRAINSIM_REQUIRE_GPU();
  const LayoutCase c = GetParam();
  const unsigned seed = std::random_device{}();
  std::mt19937 rng(seed);
  SCOPED_TRACE("seed " + std::to_string(seed));
  const auto um = static_cast<std::size_t>(c.m), un = static_cast<std::size_t>(c.n),
             uk = static_cast<std::size_t>(c.k);
  // As stored: A [m x k] (weight gradient: [k x m]), B [k x n] (forward: W [n x k]).
  const std::vector<float> a = random_values(um * uk, rng, c.dtype);
  const std::vector<float> b = random_values(un * uk, rng, c.dtype);
  const std::vector<float> a_mk = c.layout == GemmLayout::kWeightGradient ? transposed(a, c.k, c.m) : a;
  const std::vector<float> w_nk = c.layout == GemmLayout::kForward ? b : transposed(b, c.k, c.n);
  const std::vector<double> ref = trainsim::kernels::ref::linear(c.m, c.n, c.k, a_mk, w_nk, {}, false);
  auto da = upload_as(a, c.dtype, false);
  auto db = upload_as(b, c.dtype, false);
  DeviceBuffer<std::uint8_t> dc(um * un * trainsim::kernels::output_element_bytes(c.dtype));
  dc.fill_bytes(0xFF);  // NaN: unwritten elements fail
  GemmRunner runner;
  runner.run(c.dtype, c.m, c.n, c.k, da.get(), db.get(), dc.get(), nullptr, GemmEpilogue::kNone, nullptr, c.layout);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_LT(relative_error(download_output(dc, c.dtype), ref), 1e-2)
      << trainsim::kernels::to_string(c.layout) << " m=" << c.m << " n=" << c.n << " k=" << c.k;
}

std::string layout_case_name(const ::testing::TestParamInfo<LayoutCase>& param) {
  const LayoutCase& c = param.param;
  return std::string(trainsim::kernels::to_string(c.dtype)) + "_" + trainsim::kernels::to_string(c.layout) + "_" +
         std::to_string(c.m) + "x" + std::to_string(c.n) + "x" + std::to_string(c.k);
}

INSTANTIATE_TEST_SUITE_P(Backward, GemmLayouts,
                         ::testing::Values(LayoutCase{GemmDtype::kBf16, GemmLayout::kDataGradient, 384, 256, 512},
                                           LayoutCase{GemmDtype::kBf16, GemmLayout::kWeightGradient, 256, 384, 520},
                                           LayoutCase{GemmDtype::kFp16, GemmLayout::kDataGradient, 136, 200, 72},
                                           LayoutCase{GemmDtype::kFp16, GemmLayout::kWeightGradient, 200, 136, 72},
                                           LayoutCase{GemmDtype::kBf16, GemmLayout::kForward, 333, 520, 200}),
                         layout_case_name);

TEST(GemmWrapperErrors, RejectsBadSizesWithoutTouchingTheGpu) {
  TRAINSIM_REQUIRE_GPU();
  GemmRunner runner;
  int dummy = 0;
  EXPECT_THROW(runner.run(GemmDtype::kBf16, 0, 8, 8, &dummy, &dummy, &dummy, nullptr, GemmEpilogue::kNone, nullptr),
               std::invalid_argument);
  EXPECT_THROW(runner.run(GemmDtype::kBf16, 8, 8, 8, &dummy, &dummy, &dummy, nullptr, GemmEpilogue::kBias, nullptr),
               std::invalid_argument);
  EXPECT_THROW(runner.run(GemmDtype::kBf16, 8, 8, 8, &dummy, &dummy, &dummy, &dummy, GemmEpilogue::kBias, nullptr,
                          GemmLayout::kDataGradient),
               std::invalid_argument);
}

TEST(GemmLayoutNames, RoundTrip) {
  for (const char* name : {"forward", "data_gradient", "weight_gradient"})
    EXPECT_STREQ(trainsim::kernels::to_string(trainsim::kernels::parse_gemm_layout(name)), name);
  EXPECT_THROW((void)trainsim::kernels::parse_gemm_layout("tn"), std::invalid_argument);
}

TEST(GemmDtypeNames, RoundTrip) {
  for (const char* name : {"fp32", "tf32", "fp16", "bf16", "fp8"})
    EXPECT_STREQ(trainsim::kernels::to_string(trainsim::kernels::parse_gemm_dtype(name)), name);
  EXPECT_THROW((void)trainsim::kernels::parse_gemm_dtype("int4"), std::invalid_argument);
}

}  // namespace
