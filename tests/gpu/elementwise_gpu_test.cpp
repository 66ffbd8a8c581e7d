// The elementwise kernels (embedding, layernorm, GELU, residual, softmax + cross-entropy,
// AdamW) against their CPU references (elementwise_ref.h) on fresh random inputs; the seed
// is printed. Outputs are poisoned (all bytes 0xFF, a NaN in bf16 and fp32) before each
// launch and carry a poisoned guard tail, so an unwritten element shows up as NaN and an
// out-of-bounds write as a changed guard. Tolerances: ||out - ref|| / ||ref|| below 1e-2
// for bf16 outputs (bf16 keeps 8 significant bits: one rounding is at most 2^-8 relative)
// and below 1e-5 for fp32 outputs (fp32 sums in a different order than the fp64 reference).
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <iostream>
#include <random>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "elementwise_ref.h"
#include "gpu_available.h"
#include "trainsim/kernels/cuda_check.h"
#include "trainsim/kernels/device_buffer.h"
#include "trainsim/kernels/elementwise.h"

namespace {

namespace tk = trainsim::kernels;
namespace ref = trainsim::kernels::ref;
using bf16 = __nv_bfloat16;
using tk::DeviceBuffer;

constexpr double kBf16Tolerance = 1e-2;
constexpr double kFp32Tolerance = 1e-5;
constexpr std::size_t kGuard = 64;  // poisoned elements after each output

std::uint32_t fresh_seed() {
  const std::uint32_t seed = std::random_device{}();
  std::cout << "[ seed     ] " << seed << '\n';
  ::testing::Test::RecordProperty("seed", std::to_string(seed));
  return seed;
}

std::size_t sz(int v) { return static_cast<std::size_t>(v); }

// A random bf16 tensor as the kernel sees it, and the same numbers in float for the reference.
struct Bf16Tensor {
  std::vector<bf16> bits;
  std::vector<float> values;
};

Bf16Tensor random_bf16(std::size_t n, std::mt19937& rng, float mean = 0.0f, float stddev = 1.0f) {
  std::normal_distribution<float> dist(mean, stddev);
  Bf16Tensor t{std::vector<bf16>(n), std::vector<float>(n)};
  for (std::size_t i = 0; i < n; ++i) {
    t.bits[i] = __float2bfloat16(dist(rng));
    t.values[i] = __bfloat162float(t.bits[i]);
  }
  return t;
}

std::vector<float> random_floats(std::size_t n, std::mt19937& rng, float mean = 0.0f, float stddev = 1.0f) {
  std::normal_distribution<float> dist(mean, stddev);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

std::vector<float> to_float(const std::vector<bf16>& v) {
  std::vector<float> out(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) out[i] = __bfloat162float(v[i]);
  return out;
}

template <typename T>
DeviceBuffer<T> device_copy(const std::vector<T>& host) {
  DeviceBuffer<T> d(host.size());
  d.upload(host);
  return d;
}

// An output buffer of n elements plus a guard tail, every byte 0xFF.
template <typename T>
DeviceBuffer<T> poisoned(std::size_t n) {
  DeviceBuffer<T> d(n + kGuard);
  d.fill_bytes(0xFF);
  return d;
}

// The first n elements of a poisoned output; fails the test if the guard tail was written.
template <typename T>
std::vector<T> download_checked(const DeviceBuffer<T>& d, std::size_t n, const char* name) {
  std::vector<T> all = d.download();
  std::vector<unsigned char> guard(kGuard * sizeof(T));
  std::memcpy(guard.data(), all.data() + n, guard.size());
  std::size_t written = 0;
  for (unsigned char byte : guard) written += byte != 0xFF ? 1u : 0u;
  EXPECT_EQ(written, 0u) << name << ": bytes written past the end";
  all.resize(n);
  return all;
}

std::vector<float> download_bf16(const DeviceBuffer<bf16>& d, std::size_t n, const char* name) {
  return to_float(download_checked(d, n, name));
}

std::size_t count_non_finite(const std::vector<float>& v) {
  std::size_t bad = 0;
  for (float x : v) bad += std::isfinite(x) ? 0u : 1u;
  return bad;
}

double norm(std::span<const float> v) {
  double s = 0.0;
  for (float x : v) s += static_cast<double>(x) * static_cast<double>(x);
  return std::sqrt(s);
}

// ||out - ref|| / max(||ref||, norm_floor). The floor is the size of the terms a result was
// computed from, for the few small tensors where those could cancel (an fp32 result's error
// is relative to its terms, not to itself); 1 when both are zero.
double relative_error(const std::vector<float>& out, const std::vector<float>& expected, double norm_floor) {
  double diff = 0.0;
  for (std::size_t i = 0; i < out.size(); ++i) {
    const double d = static_cast<double>(out[i]) - static_cast<double>(expected[i]);
    diff += d * d;
  }
  const double scale = std::max(norm(expected), norm_floor);
  return std::sqrt(diff) / (scale > 0.0 ? scale : 1.0);
}

void expect_close(const std::vector<float>& out, const std::vector<float>& expected, double tolerance, const char* name,
                  double norm_floor = 0.0) {
  ASSERT_EQ(out.size(), expected.size()) << name;
  EXPECT_EQ(count_non_finite(out), 0u) << name << ": NaN or inf (unwritten or overflowed elements)";
  EXPECT_LT(relative_error(out, expected, norm_floor), tolerance) << name;
}

class Stream {
 public:
  Stream() { TRAINSIM_CUDA_CHECK(cudaStreamCreate(&stream_)); }
  ~Stream() { cudaStreamDestroy(stream_); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  [[nodiscard]] cudaStream_t get() const { return stream_; }
  void sync() const { TRAINSIM_CUDA_CHECK(cudaStreamSynchronize(stream_)); }

 private:
  cudaStream_t stream_ = nullptr;
};

// ---- embedding ------------------------------------------------------------------------

struct EmbeddingCase {
  int B, T, C, V;
  bool wpe;
};

// GPT-2 small and XL widths, a vocabulary smaller than B*T (many repeats), a single token.
const EmbeddingCase kEmbeddingCases[] = {
    {4, 64, 768, 50257, true}, {3, 37, 1600, 1000, false}, {8, 128, 768, 37, true}, {1, 1, 8, 1, true}};

// Tokens with a frequent one (as a newline or "the" in text), so runs of repeats are long.
std::vector<int> random_tokens(std::size_t n, int V, std::mt19937& rng) {
  std::uniform_int_distribution<int> uniform(0, V - 1);
  std::bernoulli_distribution frequent(0.3);
  const int common = uniform(rng);
  std::vector<int> tokens(n);
  for (int& t : tokens) t = frequent(rng) ? common : uniform(rng);
  return tokens;
}

TEST(EmbeddingGpu, ForwardMatchesReference) {
  TRAINSIM_REQUIRE_GPU();
  std::mt19937 rng(fresh_seed());
  Stream stream;
  for (const EmbeddingCase& c : kEmbeddingCases) {
    SCOPED_TRACE("B=" + std::to_string(c.B) + " T=" + std::to_string(c.T) + " C=" + std::to_string(c.C) +
                 " V=" + std::to_string(c.V) + (c.wpe ? " with wpe" : " without wpe"));
    const std::size_t N = sz(c.B) * sz(c.T);
    const std::vector<int> tokens = random_tokens(N, c.V, rng);
    const Bf16Tensor wte = random_bf16(sz(c.V) * sz(c.C), rng);
    const Bf16Tensor wpe = random_bf16(sz(c.T) * sz(c.C), rng);
    std::vector<float> expected(N * sz(c.C));
    ref::embedding_forward(expected, tokens, wte.values,
                           c.wpe ? std::span<const float>(wpe.values) : std::span<const float>(), c.B, c.T, c.C, c.V);

    const auto d_tokens = device_copy(tokens);
    const auto d_wte = device_copy(wte.bits);
    const auto d_wpe = device_copy(wpe.bits);
    auto d_out = poisoned<bf16>(N * sz(c.C));
    tk::embedding_forward(d_out.get(), d_tokens.get(), d_wte.get(), c.wpe ? d_wpe.get() : nullptr, c.B, c.T, c.C, c.V,
                          stream.get());
    stream.sync();
    expect_close(download_bf16(d_out, N * sz(c.C), "out"), expected, kBf16Tolerance, "out");
  }
}

TEST(EmbeddingGpu, ForwardWritesNaNRowsForTokensOutsideTheVocabulary) {
  TRAINSIM_REQUIRE_GPU();
  Stream stream;
  const int B = 1, T = 3, C = 8, V = 4;
  const std::vector<int> tokens = {1, V, -1};
  std::vector<bf16> wte(sz(V) * sz(C));
  for (std::size_t i = 0; i < wte.size(); ++i) wte[i] = __float2bfloat16(static_cast<float>(i));
  const auto d_tokens = device_copy(tokens);
  const auto d_wte = device_copy(wte);
  auto d_out = poisoned<bf16>(sz(B * T * C));
  tk::embedding_forward(d_out.get(), d_tokens.get(), d_wte.get(), nullptr, B, T, C, V, stream.get());
  stream.sync();
  const std::vector<float> out = download_bf16(d_out, sz(B * T * C), "out");
  for (std::size_t c = 0; c < sz(C); ++c) {
    EXPECT_EQ(out[c], static_cast<float>(sz(C) + c));  // row of token 1
    EXPECT_TRUE(std::isnan(out[sz(C) + c]));
    EXPECT_TRUE(std::isnan(out[2 * sz(C) + c]));
  }
}

TEST(EmbeddingGpu, BackwardMatchesReferenceAndIsDeterministic) {
  TRAINSIM_REQUIRE_GPU();
  std::mt19937 rng(fresh_seed());
  Stream stream;
  for (const EmbeddingCase& c : kEmbeddingCases) {
    SCOPED_TRACE("B=" + std::to_string(c.B) + " T=" + std::to_string(c.T) + " C=" + std::to_string(c.C) +
                 " V=" + std::to_string(c.V) + (c.wpe ? " with dwpe" : " without dwpe"));
    const std::size_t N = sz(c.B) * sz(c.T);
    const std::vector<int> tokens = random_tokens(N, c.V, rng);
    const Bf16Tensor dout = random_bf16(N * sz(c.C), rng);
    const std::vector<float> dwte0 = random_floats(sz(c.V) * sz(c.C), rng);  // accumulated into
    const std::vector<float> dwpe0 = random_floats(sz(c.T) * sz(c.C), rng);
    std::vector<float> dwte_expected = dwte0;
    std::vector<float> dwpe_expected = c.wpe ? dwpe0 : std::vector<float>();
    ref::embedding_backward(dwte_expected, dwpe_expected, dout.values, tokens, c.B, c.T, c.C, c.V);

    const auto d_tokens = device_copy(tokens);
    const auto d_dout = device_copy(dout.bits);
    const std::size_t workspace_bytes = tk::embedding_backward_workspace_bytes(c.B, c.T, c.V);
    std::vector<std::vector<float>> dwte_runs;
    for (int run = 0; run < 2; ++run) {
      auto d_dwte = device_copy(dwte0);
      auto d_dwpe = device_copy(dwpe0);
      DeviceBuffer<unsigned char> workspace(workspace_bytes);
      workspace.fill_bytes(0xFF);
      tk::embedding_backward(d_dwte.get(), c.wpe ? d_dwpe.get() : nullptr, d_dout.get(), d_tokens.get(),
                             workspace.get(), workspace.size(), c.B, c.T, c.C, c.V, stream.get());
      stream.sync();
      dwte_runs.push_back(d_dwte.download());
      if (run == 0) {
        expect_close(dwte_runs.back(), dwte_expected, kFp32Tolerance, "dwte");
        const std::vector<float> dwpe = d_dwpe.download();
        if (c.wpe)
          expect_close(dwpe, dwpe_expected, kFp32Tolerance, "dwpe");
        else
          EXPECT_EQ(dwpe, dwpe0) << "dwpe changed although it was not passed";
        std::vector<bool> used(sz(c.V), false);
        for (int t : tokens) used[sz(t)] = true;
        std::size_t changed_unused = 0;
        for (std::size_t i = 0; i < dwte0.size(); ++i)
          changed_unused += !used[i / sz(c.C)] && dwte_runs.back()[i] != dwte0[i] ? 1u : 0u;
        EXPECT_EQ(changed_unused, 0u) << "dwte rows of tokens not in the batch changed";
      }
    }
    EXPECT_TRUE(dwte_runs[0] == dwte_runs[1]) << "two identical runs gave different dwte bits";
  }
}

// ---- layernorm ------------------------------------------------------------------------

struct LayerNormCase {
  int rows, cols;
};

// GPT-2 small (B*T = 8192) and XL widths, row counts that do not fill the 8-row blocks.
const LayerNormCase kLayerNormCases[] = {{8192, 768}, {37, 1600}, {1001, 768}, {1, 8}, {5, 4096}};

TEST(LayerNormGpu, ForwardMatchesReference) {
  TRAINSIM_REQUIRE_GPU();
  std::mt19937 rng(fresh_seed());
  Stream stream;
  for (const LayerNormCase& c : kLayerNormCases) {
    SCOPED_TRACE("rows=" + std::to_string(c.rows) + " cols=" + std::to_string(c.cols));
    const std::size_t n = sz(c.rows) * sz(c.cols);
    const Bf16Tensor inp = random_bf16(n, rng, 1.5f, 2.0f);  // an offset, as residual streams have
    const Bf16Tensor weight = random_bf16(sz(c.cols), rng, 1.0f, 0.2f);
    const Bf16Tensor bias = random_bf16(sz(c.cols), rng, 0.0f, 0.2f);
    std::vector<float> out_expected(n), mean_expected(sz(c.rows)), rstd_expected(sz(c.rows));
    ref::layernorm_forward(out_expected, mean_expected, rstd_expected, inp.values, weight.values, bias.values, c.rows,
                           c.cols);

    const auto d_inp = device_copy(inp.bits);
    const auto d_weight = device_copy(weight.bits);
    const auto d_bias = device_copy(bias.bits);
    auto d_out = poisoned<bf16>(n);
    auto d_mean = poisoned<float>(sz(c.rows));
    auto d_rstd = poisoned<float>(sz(c.rows));
    tk::layernorm_forward(d_out.get(), d_mean.get(), d_rstd.get(), d_inp.get(), d_weight.get(), d_bias.get(), c.rows,
                          c.cols, stream.get());
    stream.sync();
    expect_close(download_bf16(d_out, n, "out"), out_expected, kBf16Tolerance, "out");
    // A mean is a sum of C terms of about |inp|: its error scales with them, not with it.
    expect_close(download_checked(d_mean, sz(c.rows), "mean"), mean_expected, kFp32Tolerance, "mean",
                 norm(inp.values) / std::sqrt(static_cast<double>(c.cols)));
    expect_close(download_checked(d_rstd, sz(c.rows), "rstd"), rstd_expected, kFp32Tolerance, "rstd");
  }
}

TEST(LayerNormGpu, BackwardMatchesReferenceAndIsDeterministic) {
  TRAINSIM_REQUIRE_GPU();
  std::mt19937 rng(fresh_seed());
  Stream stream;
  for (const LayerNormCase& c : kLayerNormCases) {
    SCOPED_TRACE("rows=" + std::to_string(c.rows) + " cols=" + std::to_string(c.cols));
    const std::size_t n = sz(c.rows) * sz(c.cols);
    const Bf16Tensor inp = random_bf16(n, rng, 1.5f, 2.0f);
    const Bf16Tensor weight = random_bf16(sz(c.cols), rng, 1.0f, 0.2f);
    const Bf16Tensor bias = random_bf16(sz(c.cols), rng, 0.0f, 0.2f);
    const Bf16Tensor dout = random_bf16(n, rng);
    // The backward takes the forward's statistics: both sides get the reference's.
    std::vector<float> out(n), mean(sz(c.rows)), rstd(sz(c.rows));
    ref::layernorm_forward(out, mean, rstd, inp.values, weight.values, bias.values, c.rows, c.cols);
    const std::vector<float> dweight0 = random_floats(sz(c.cols), rng);  // accumulated into
    const std::vector<float> dbias0 = random_floats(sz(c.cols), rng);
    std::vector<float> dinp_expected(n), dweight_expected = dweight0, dbias_expected = dbias0;
    ref::layernorm_backward(dinp_expected, dweight_expected, dbias_expected, dout.values, inp.values, weight.values,
                            mean, rstd, c.rows, c.cols);

    const auto d_inp = device_copy(inp.bits);
    const auto d_weight = device_copy(weight.bits);
    const auto d_dout = device_copy(dout.bits);
    const auto d_mean = device_copy(mean);
    const auto d_rstd = device_copy(rstd);
    std::vector<std::vector<float>> dweight_runs;
    for (int run = 0; run < 2; ++run) {
      auto d_dinp = poisoned<bf16>(n);
      auto d_dweight = device_copy(dweight0);
      auto d_dbias = device_copy(dbias0);
      DeviceBuffer<unsigned char> workspace(tk::layernorm_backward_workspace_bytes(c.rows, c.cols));
      workspace.fill_bytes(0xFF);
      tk::layernorm_backward(d_dinp.get(), d_dweight.get(), d_dbias.get(), d_dout.get(), d_inp.get(), d_weight.get(),
                             d_mean.get(), d_rstd.get(), workspace.get(), workspace.size(), c.rows, c.cols,
                             stream.get());
      stream.sync();
      dweight_runs.push_back(d_dweight.download());
      if (run == 0) {
        expect_close(download_bf16(d_dinp, n, "dinp"), dinp_expected, kBf16Tolerance, "dinp");
        expect_close(dweight_runs.back(), dweight_expected, kFp32Tolerance, "dweight");
        expect_close(d_dbias.download(), dbias_expected, kFp32Tolerance, "dbias");
      }
    }
    EXPECT_TRUE(dweight_runs[0] == dweight_runs[1]) << "two identical runs gave different dweight bits";
  }
}

// ---- GELU and residual ----------------------------------------------------------------

// Element counts: single, below one vector, a vector tail, GPT-2 small's MLP activation
// (8192 x 3072), odd large.
const std::size_t kFlatSizes[] = {1, 7, 8, 8192u * 3072u, 1000003};

// The flat kernels at an element offset of 0 (16-byte vectors) and 1 (element path).
const std::size_t kOffsets[] = {0, 1};

// For x below about -6, 1 + tanh(u) cancels: fp32 leaves gelu(x) and gelu'(x) an absolute
// error near 1e-7 |x| (resp. 1e-6 |dout|), which in a one-element tensor reads as a large
// relative error. The floor, 1e-3 of the input's norm, keeps that from failing the test.
constexpr double kGeluFloor = 1e-3;

TEST(GeluGpu, ForwardMatchesReference) {
  TRAINSIM_REQUIRE_GPU();
  std::mt19937 rng(fresh_seed());
  Stream stream;
  for (std::size_t n : kFlatSizes) {
    for (std::size_t offset : kOffsets) {
      SCOPED_TRACE("n=" + std::to_string(n) + " offset=" + std::to_string(offset));
      const Bf16Tensor inp = random_bf16(n + offset, rng, 0.0f, 3.0f);
      std::vector<float> expected(n);
      ref::gelu_forward(expected, std::span<const float>(inp.values).subspan(offset));
      const auto d_inp = device_copy(inp.bits);
      auto d_out = poisoned<bf16>(n + offset);
      tk::gelu_forward(d_out.get() + offset, d_inp.get() + offset, n, stream.get());
      stream.sync();
      std::vector<float> out = download_bf16(d_out, n + offset, "out");
      EXPECT_EQ(count_non_finite(std::vector<float>(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(offset))),
                offset)
          << "written before the start";
      out.erase(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(offset));
      expect_close(out, expected, kBf16Tolerance, "out",
                   kGeluFloor * norm(std::span<const float>(inp.values).subspan(offset)));
    }
  }
}

TEST(GeluGpu, BackwardMatchesReferenceAlsoInPlace) {
  TRAINSIM_REQUIRE_GPU();
  std::mt19937 rng(fresh_seed());
  Stream stream;
  for (std::size_t n : kFlatSizes) {
    for (std::size_t offset : kOffsets) {
      SCOPED_TRACE("n=" + std::to_string(n) + " offset=" + std::to_string(offset));
      const Bf16Tensor inp = random_bf16(n + offset, rng, 0.0f, 3.0f);
      const Bf16Tensor dout = random_bf16(n + offset, rng);
      std::vector<float> expected(n);
      ref::gelu_backward(expected, std::span<const float>(inp.values).subspan(offset),
                         std::span<const float>(dout.values).subspan(offset));
      const auto d_inp = device_copy(inp.bits);
      const auto d_dout = device_copy(dout.bits);
      auto d_dinp = poisoned<bf16>(n + offset);
      tk::gelu_backward(d_dinp.get() + offset, d_inp.get() + offset, d_dout.get() + offset, n, stream.get());
      stream.sync();
      std::vector<float> dinp = download_bf16(d_dinp, n + offset, "dinp");
      dinp.erase(dinp.begin(), dinp.begin() + static_cast<std::ptrdiff_t>(offset));
      const double dinp_floor = kGeluFloor * norm(std::span<const float>(dout.values).subspan(offset));
      expect_close(dinp, expected, kBf16Tolerance, "dinp", dinp_floor);

      // In place, as llm.c runs it: dinp overwrites dout.
      auto d_inplace = device_copy(dout.bits);
      tk::gelu_backward(d_inplace.get() + offset, d_inp.get() + offset, d_inplace.get() + offset, n, stream.get());
      stream.sync();
      std::vector<float> inplace = to_float(d_inplace.download());
      inplace.erase(inplace.begin(), inplace.begin() + static_cast<std::ptrdiff_t>(offset));
      expect_close(inplace, expected, kBf16Tolerance, "dinp in place", dinp_floor);
    }
  }
}

TEST(ResidualGpu, ForwardMatchesReferenceAlsoInPlace) {
  TRAINSIM_REQUIRE_GPU();
  std::mt19937 rng(fresh_seed());
  Stream stream;
  for (std::size_t n : kFlatSizes) {
    for (std::size_t offset : kOffsets) {
      SCOPED_TRACE("n=" + std::to_string(n) + " offset=" + std::to_string(offset));
      const Bf16Tensor a = random_bf16(n + offset, rng);
      const Bf16Tensor b = random_bf16(n + offset, rng, 0.0f, 0.5f);
      std::vector<float> expected(n);
      ref::residual_forward(expected, std::span<const float>(a.values).subspan(offset),
                            std::span<const float>(b.values).subspan(offset));
      const auto d_a = device_copy(a.bits);
      const auto d_b = device_copy(b.bits);
      auto d_out = poisoned<bf16>(n + offset);
      tk::residual_forward(d_out.get() + offset, d_a.get() + offset, d_b.get() + offset, n, stream.get());
      stream.sync();
      std::vector<float> out = download_bf16(d_out, n + offset, "out");
      out.erase(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(offset));
      expect_close(out, expected, kBf16Tolerance, "out");

      auto d_inplace = device_copy(a.bits);  // out == a
      tk::residual_forward(d_inplace.get() + offset, d_inplace.get() + offset, d_b.get() + offset, n, stream.get());
      stream.sync();
      std::vector<float> inplace = to_float(d_inplace.download());
      inplace.erase(inplace.begin(), inplace.begin() + static_cast<std::ptrdiff_t>(offset));
      expect_close(inplace, expected, kBf16Tolerance, "out in place");
    }
  }
}

// ---- fused softmax + cross-entropy ----------------------------------------------------

struct SoftmaxCase {
  int rows, V, Vp;
};

// GPT-2's vocabulary unpadded (element path) and padded to 50304 as llm.c (vectors), a
// vocabulary below one vector, vectors plus a tail plus padding, exactly one vector.
const SoftmaxCase kSoftmaxCases[] = {{71, 50257, 50257}, {37, 50257, 50304}, {5, 7, 7},
                                     {16, 1000, 1024},   {3, 33, 40},        {2, 8, 8}};

struct SoftmaxCheck {
  std::vector<float> losses;
  std::vector<float> dlogits;
};

// Compares losses (fp32) and dlogits (bf16). The one-hot entry (about -scale) dominates a
// row's norm, so the softmax entries are also compared on their own; padding must be 0.
void expect_softmax_close(const SoftmaxCheck& gpu, const SoftmaxCheck& expected, const std::vector<int>& targets,
                          const SoftmaxCase& c, const char* name) {
  SCOPED_TRACE(name);
  expect_close(gpu.losses, expected.losses, kFp32Tolerance, "losses");
  expect_close(gpu.dlogits, expected.dlogits, kBf16Tolerance, "dlogits");
  std::vector<float> soft_gpu, soft_expected;
  std::size_t padding_nonzero = 0;
  for (std::size_t r = 0; r < sz(c.rows); ++r) {
    for (std::size_t i = 0; i < sz(c.Vp); ++i) {
      const std::size_t k = r * sz(c.Vp) + i;
      if (i >= sz(c.V)) {
        padding_nonzero += gpu.dlogits[k] != 0.0f ? 1u : 0u;
      } else if (i != sz(targets[r])) {
        soft_gpu.push_back(gpu.dlogits[k]);
        soft_expected.push_back(expected.dlogits[k]);
      }
    }
  }
  EXPECT_EQ(padding_nonzero, 0u) << "padding columns of dlogits not zero";
  if (!soft_expected.empty()) expect_close(soft_gpu, soft_expected, kBf16Tolerance, "dlogits off the target");
}

TEST(SoftmaxCrossEntropyGpu, MatchesReferenceAlsoInPlace) {
  TRAINSIM_REQUIRE_GPU();
  std::mt19937 rng(fresh_seed());
  Stream stream;
  for (const SoftmaxCase& c : kSoftmaxCases) {
    SCOPED_TRACE("rows=" + std::to_string(c.rows) + " V=" + std::to_string(c.V) + " Vp=" + std::to_string(c.Vp));
    const std::size_t n = sz(c.rows) * sz(c.Vp);
    Bf16Tensor logits = random_bf16(n, rng, 0.0f, 2.0f);
    for (std::size_t i = 0; i < sz(c.Vp); ++i) {  // row 0 beyond exp's fp32 range (e^89 > 3.4e38)
      logits.bits[i] = __float2bfloat16(logits.values[i] + 100.0f);
      logits.values[i] = __bfloat162float(logits.bits[i]);
    }
    std::uniform_int_distribution<int> target_dist(0, c.V - 1);
    std::vector<int> targets(sz(c.rows));
    for (int& t : targets) t = target_dist(rng);
    const float scale = 1.0f / static_cast<float>(c.rows);
    SoftmaxCheck expected{std::vector<float>(sz(c.rows)), std::vector<float>(n)};
    ref::softmax_cross_entropy(expected.losses, expected.dlogits, logits.values, targets, c.rows, c.V, c.Vp, scale);

    const auto d_logits = device_copy(logits.bits);
    const auto d_targets = device_copy(targets);
    auto d_losses = poisoned<float>(sz(c.rows));
    auto d_dlogits = poisoned<bf16>(n);
    tk::softmax_cross_entropy(d_losses.get(), d_dlogits.get(), d_logits.get(), d_targets.get(), c.rows, c.V, c.Vp,
                              scale, stream.get());
    stream.sync();
    expect_softmax_close({download_checked(d_losses, sz(c.rows), "losses"), download_bf16(d_dlogits, n, "dlogits")},
                         expected, targets, c, "separate dlogits");

    auto d_inplace = device_copy(logits.bits);  // dlogits overwrites logits, as llm.c
    auto d_losses2 = poisoned<float>(sz(c.rows));
    tk::softmax_cross_entropy(d_losses2.get(), d_inplace.get(), d_inplace.get(), d_targets.get(), c.rows, c.V, c.Vp,
                              scale, stream.get());
    stream.sync();
    expect_softmax_close({download_checked(d_losses2, sz(c.rows), "losses"), to_float(d_inplace.download())}, expected,
                         targets, c, "in place");
  }
}

TEST(SoftmaxCrossEntropyGpu, TargetOutsideTheVocabularyGivesNaNLossOnlyForItsRow) {
  TRAINSIM_REQUIRE_GPU();
  Stream stream;
  const int rows = 3, V = 16, Vp = 16;
  const std::vector<bf16> logits(sz(rows * Vp), __float2bfloat16(0.0f));  // uniform: loss ln 16
  const std::vector<int> targets = {V, 3, -1};
  const auto d_logits = device_copy(logits);
  const auto d_targets = device_copy(targets);
  auto d_losses = poisoned<float>(sz(rows));
  auto d_dlogits = poisoned<bf16>(sz(rows * Vp));
  tk::softmax_cross_entropy(d_losses.get(), d_dlogits.get(), d_logits.get(), d_targets.get(), rows, V, Vp, 1.0f,
                            stream.get());
  stream.sync();
  const std::vector<float> losses = download_checked(d_losses, sz(rows), "losses");
  EXPECT_TRUE(std::isnan(losses[0]));
  EXPECT_NEAR(static_cast<double>(losses[1]), std::log(16.0), 1e-6);
  EXPECT_TRUE(std::isnan(losses[2]));
}

// ---- AdamW ----------------------------------------------------------------------------

TEST(AdamWGpu, MatchesReference) {
  TRAINSIM_REQUIRE_GPU();
  std::mt19937 rng(fresh_seed());
  Stream stream;
  const float lr = 1e-2f, beta1 = 0.9f, beta2 = 0.95f, eps = 1e-8f, weight_decay = 0.1f;
  const std::size_t sizes[] = {1, 5, (1u << 20) + 3};
  const int steps[] = {1, 1000};
  for (std::size_t n : sizes) {
    for (int step : steps) {
      for (std::size_t offset : kOffsets) {
        SCOPED_TRACE("n=" + std::to_string(n) + " step=" + std::to_string(step) + " offset=" + std::to_string(offset));
        const std::size_t total = n + offset;
        const std::vector<float> p0 = random_floats(total, rng);
        const std::vector<float> g = random_floats(total, rng, 0.0f, 1e-2f);
        std::vector<float> m0(total, 0.0f), v0(total, 0.0f);
        if (step > 1) {  // moments of earlier steps: |m| / sqrt(v) below 1, as Adam keeps them
          std::uniform_real_distribution<float> ratio(1.0f, 10.0f);
          m0 = random_floats(total, rng, 0.0f, 1e-2f);
          for (std::size_t i = 0; i < total; ++i) v0[i] = m0[i] * m0[i] * ratio(rng) + 1e-12f;
        }
        std::vector<float> p_expected(p0.begin() + static_cast<std::ptrdiff_t>(offset), p0.end());
        std::vector<float> m_expected(m0.begin() + static_cast<std::ptrdiff_t>(offset), m0.end());
        std::vector<float> v_expected(v0.begin() + static_cast<std::ptrdiff_t>(offset), v0.end());
        ref::adamw_step(p_expected, m_expected, v_expected, std::span<const float>(g).subspan(offset), lr, beta1, beta2,
                        eps, weight_decay, step);

        auto d_p = device_copy(p0);
        auto d_m = device_copy(m0);
        auto d_v = device_copy(v0);
        const auto d_g = device_copy(g);
        auto d_p_bf16 = poisoned<bf16>(total);
        tk::adamw_step(d_p.get() + offset, d_p_bf16.get() + offset, d_m.get() + offset, d_v.get() + offset,
                       d_g.get() + offset, n, lr, beta1, beta2, eps, weight_decay, step, stream.get());
        stream.sync();
        auto tail = [offset](std::vector<float> v) {
          v.erase(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(offset));
          return v;
        };
        const std::vector<float> p = tail(d_p.download());
        expect_close(p, p_expected, kFp32Tolerance, "params", norm(std::span<const float>(p0).subspan(offset)));
        // m = beta1 m + (1 - beta1) g can cancel for a few elements: scale by the terms.
        std::vector<float> m_terms(n);
        for (std::size_t i = 0; i < n; ++i)
          m_terms[i] = std::abs(beta1 * m0[offset + i]) + std::abs((1.0f - beta1) * g[offset + i]);
        expect_close(tail(d_m.download()), m_expected, kFp32Tolerance, "m", norm(m_terms));
        expect_close(tail(d_v.download()), v_expected, kFp32Tolerance, "v");
        // The update itself (about lr), which the params' norm would hide.
        std::vector<float> delta(n), delta_expected(n);
        for (std::size_t i = 0; i < n; ++i) {
          delta[i] = p[i] - p0[offset + i];
          delta_expected[i] = p_expected[i] - p0[offset + i];
        }
        // Scaled by at least lr per element: a small update is exact only to fp32 of the params.
        expect_close(delta, delta_expected, 1e-3, "params - params before",
                     static_cast<double>(lr) * std::sqrt(static_cast<double>(n)));
        const std::vector<bf16> copy = download_checked(d_p_bf16, total, "params_bf16");
        std::size_t mismatched = 0;
        for (std::size_t i = 0; i < n; ++i) {
          const float rounded = __bfloat162float(__float2bfloat16(p[i]));
          mismatched += __bfloat162float(copy[offset + i]) != rounded ? 1u : 0u;
        }
        EXPECT_EQ(mismatched, 0u) << "params_bf16 is not params rounded to nearest even";
      }
    }
  }
}

// ---- argument checks ------------------------------------------------------------------

TEST(ElementwiseGpu, LaunchersRejectBadArguments) {
  TRAINSIM_REQUIRE_GPU();
  DeviceBuffer<bf16> x(64);
  DeviceBuffer<float> f(64);
  DeviceBuffer<int> i(64);
  DeviceBuffer<unsigned char> workspace(16);
  cudaStream_t s = nullptr;
  EXPECT_THROW(tk::embedding_forward(nullptr, i.get(), x.get(), nullptr, 1, 1, 8, 8, s), std::invalid_argument);
  EXPECT_THROW(tk::embedding_forward(x.get(), i.get(), x.get(), nullptr, 1, 1, 12, 8, s), std::invalid_argument);
  EXPECT_THROW(tk::embedding_forward(x.get(), i.get(), x.get(), nullptr, 0, 1, 8, 8, s), std::invalid_argument);
  EXPECT_THROW(
      tk::embedding_backward(f.get(), nullptr, x.get(), i.get(), workspace.get(), workspace.size(), 4, 4, 8, 8, s),
      std::invalid_argument);  // workspace too small
  EXPECT_THROW(tk::layernorm_forward(x.get(), f.get(), f.get(), x.get(), x.get(), nullptr, 1, 8, s),
               std::invalid_argument);
  EXPECT_THROW(tk::layernorm_forward(x.get(), f.get(), f.get(), x.get(), x.get(), x.get(), -1, 8, s),
               std::invalid_argument);
  EXPECT_THROW(tk::layernorm_backward(x.get(), f.get(), f.get(), x.get(), x.get(), x.get(), f.get(), f.get(),
                                      workspace.get(), workspace.size(), 8, 8, s),
               std::invalid_argument);  // workspace too small
  EXPECT_THROW(tk::gelu_forward(x.get(), x.get(), 0, s), std::invalid_argument);
  EXPECT_THROW(tk::gelu_backward(x.get(), nullptr, x.get(), 8, s), std::invalid_argument);
  EXPECT_THROW(tk::residual_forward(x.get(), x.get(), nullptr, 8, s), std::invalid_argument);
  EXPECT_THROW(tk::softmax_cross_entropy(f.get(), x.get(), x.get(), i.get(), 1, 16, 8, 1.0f, s),
               std::invalid_argument);  // Vp < V
  EXPECT_THROW(tk::softmax_cross_entropy(f.get(), x.get(), x.get(), nullptr, 1, 8, 8, 1.0f, s), std::invalid_argument);
  EXPECT_THROW(tk::adamw_step(f.get(), x.get(), f.get(), f.get(), f.get(), 8, 1e-3f, 0.9f, 0.95f, 1e-8f, 0.0f, 0, s),
               std::invalid_argument);  // step 0
  EXPECT_THROW(tk::adamw_step(f.get(), x.get(), f.get(), f.get(), f.get(), 8, 1e-3f, 1.0f, 0.95f, 1e-8f, 0.0f, 1, s),
               std::invalid_argument);  // beta1 1
}

}  // namespace
