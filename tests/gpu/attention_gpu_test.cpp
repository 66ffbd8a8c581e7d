// The flash attention kernels (kernels/src/attention_*.cu) against the fp64 CPU
// reference (kernels/reference/attention_ref.h) on fresh random inputs. Outputs are
// poisoned (all bytes 0xFF, a NaN in bf16 and fp32) before each launch, and a guard
// past the end of each output must stay poisoned.
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "attention_ref.h"
#include "gpu_available.h"
#include "trainsim/kernels/attention.h"
#include "trainsim/kernels/cuda_check.h"
#include "trainsim/kernels/device_buffer.h"

namespace trainsim::kernels {
namespace {

using bf16 = __nv_bfloat16;

constexpr std::size_t kGuard = 256;  // elements past each output that must stay untouched
constexpr int kPoison = 0xFF;

// bf16 outputs against the fp64 reference: bf16 rounding of P, dS and the outputs
// gives 2e-3 to 4e-3 on these shapes; lse is computed in fp32 throughout.
constexpr double kBf16Tolerance = 2e-2;
constexpr double kLseTolerance = 1e-3;

std::size_t elements(AttentionShape s) {
  return static_cast<std::size_t>(s.batch) * static_cast<std::size_t>(s.heads) * static_cast<std::size_t>(s.seq) *
         static_cast<std::size_t>(s.head_dim);
}

std::size_t rows(AttentionShape s) {
  return static_cast<std::size_t>(s.batch) * static_cast<std::size_t>(s.heads) * static_cast<std::size_t>(s.seq);
}

ref::AttentionShape to_ref(AttentionShape s) { return {s.batch, s.heads, s.seq, s.head_dim}; }

std::string describe(AttentionShape s) {
  return "B=" + std::to_string(s.batch) + " H=" + std::to_string(s.heads) + " T=" + std::to_string(s.seq) +
         " D=" + std::to_string(s.head_dim);
}

// A random tensor as the kernel sees it (bf16) and as the reference sees it (the
// same values in float), so the comparison measures only the kernel's error.
struct Tensor {
  std::vector<bf16> bits;
  std::vector<float> values;
};

Tensor random_tensor(std::size_t n, float stddev, std::mt19937& rng) {
  std::normal_distribution<float> dist(0.0F, stddev);
  Tensor t{std::vector<bf16>(n), std::vector<float>(n)};
  for (std::size_t i = 0; i < n; ++i) {
    t.bits[i] = __float2bfloat16(dist(rng));
    t.values[i] = __bfloat162float(t.bits[i]);
  }
  return t;
}

template <typename T>
DeviceBuffer<T> upload(const std::vector<T>& host) {
  DeviceBuffer<T> d(host.size());
  d.upload(host);
  return d;
}

// An output buffer of n elements plus a guard, every byte poisoned.
template <typename T>
DeviceBuffer<T> poisoned(std::size_t n) {
  DeviceBuffer<T> d(n + kGuard);
  d.fill_bytes(kPoison);
  return d;
}

// The first n elements as floats; fails the test if any guard byte was written.
std::vector<float> download_checked(const DeviceBuffer<bf16>& d, std::size_t n, const char* name) {
  const std::vector<bf16> all = d.download();
  std::vector<unsigned char> guard(kGuard * sizeof(bf16));
  std::memcpy(guard.data(), all.data() + n, guard.size());
  for (std::size_t i = 0; i < guard.size(); ++i)
    if (guard[i] != kPoison) {
      ADD_FAILURE() << name << ": wrote past its end (guard byte " << i << ")";
      break;
    }
  std::vector<float> out(n);
  for (std::size_t i = 0; i < n; ++i) out[i] = __bfloat162float(all[i]);
  return out;
}

std::vector<float> download_checked(const DeviceBuffer<float>& d, std::size_t n, const char* name) {
  std::vector<float> all = d.download();
  std::vector<unsigned char> guard(kGuard * sizeof(float));
  std::memcpy(guard.data(), all.data() + n, guard.size());
  for (std::size_t i = 0; i < guard.size(); ++i)
    if (guard[i] != kPoison) {
      ADD_FAILURE() << name << ": wrote past its end (guard byte " << i << ")";
      break;
    }
  all.resize(n);
  return all;
}

template <typename T>
bool same_bytes(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

// ||got - want|| / ||want||, failing on any non-finite element (an unwritten,
// still poisoned element is NaN). Where the reference is zero throughout (dq and dk
// at T = 1), the root-mean-square of got must be below the tolerance instead.
void expect_close(const std::vector<float>& got, const std::vector<float>& want, double tolerance,
                  const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  std::size_t non_finite = 0;
  double diff = 0.0;
  double norm = 0.0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (!std::isfinite(got[i])) {
      ++non_finite;
      continue;
    }
    const double d = double{got[i]} - double{want[i]};
    diff += d * d;
    norm += double{want[i]} * double{want[i]};
  }
  EXPECT_EQ(non_finite, 0U) << what << ": non-finite elements (unwritten outputs stay NaN)";
  if (norm == 0.0) {
    const double rms = std::sqrt(diff / static_cast<double>(got.size()));
    EXPECT_LT(rms, tolerance) << what << ": reference is zero, rms of the kernel's output";
    return;
  }
  const double relative = std::sqrt(diff / norm);
  EXPECT_LT(relative, tolerance) << what << ": ||out - ref|| / ||ref||";
  std::cout << "  " << what << ": relative error " << relative << "\n";
}

// Forward and backward on fresh random inputs against the reference. q_stddev
// above 1 spreads the scores: a peaked softmax exercises the running max.
void check_against_reference(AttentionShape shape, float q_stddev) {
  // A fresh seed each run; TRAINSIM_TEST_SEED replays a printed one.
  const char* fixed = std::getenv("TRAINSIM_TEST_SEED");
  const auto seed = fixed != nullptr ? static_cast<std::uint32_t>(std::stoul(fixed)) : std::random_device{}();
  std::cout << "attention " << describe(shape) << " seed " << seed << "\n";
  SCOPED_TRACE(describe(shape) + " seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  const std::size_t n = elements(shape);
  const std::size_t nrows = rows(shape);
  const Tensor q = random_tensor(n, q_stddev, rng);
  const Tensor k = random_tensor(n, 1.0F, rng);
  const Tensor v = random_tensor(n, 1.0F, rng);
  const Tensor dout = random_tensor(n, 1.0F, rng);

  // Forward.
  const auto q_d = upload(q.bits);
  const auto k_d = upload(k.bits);
  const auto v_d = upload(v.bits);
  auto o_d = poisoned<bf16>(n);
  auto lse_d = poisoned<float>(nrows);
  attention_forward(q_d.get(), k_d.get(), v_d.get(), o_d.get(), lse_d.get(), shape, nullptr);
  TRAINSIM_CUDA_CHECK(cudaDeviceSynchronize());
  const auto want = ref::attention_forward(q.values, k.values, v.values, to_ref(shape));
  expect_close(download_checked(o_d, n, "o"), want.o, kBf16Tolerance, "o");
  expect_close(download_checked(lse_d, nrows, "lse"), want.lse, kLseTolerance, "lse");
  EXPECT_TRUE(same_bytes(q_d.download(), q.bits)) << "forward changed q";

  // Backward from the kernel's own o and lse, with a poisoned workspace: the
  // kernels must initialize what they accumulate into.
  const auto o_bits = o_d.download();
  const auto lse_values = lse_d.download();
  const auto dout_d = upload(dout.bits);
  auto dq_d = poisoned<bf16>(n);
  auto dk_d = poisoned<bf16>(n);
  auto dv_d = poisoned<bf16>(n);
  DeviceBuffer<unsigned char> workspace(attention_backward_workspace_bytes(shape));
  workspace.fill_bytes(kPoison);
  attention_backward(q_d.get(), k_d.get(), v_d.get(), o_d.get(), dout_d.get(), lse_d.get(), dq_d.get(), dk_d.get(),
                     dv_d.get(), workspace.get(), shape, nullptr);
  TRAINSIM_CUDA_CHECK(cudaDeviceSynchronize());
  const auto grads = ref::attention_backward(q.values, k.values, v.values, dout.values, to_ref(shape));
  expect_close(download_checked(dq_d, n, "dq"), grads.dq, kBf16Tolerance, "dq");
  expect_close(download_checked(dk_d, n, "dk"), grads.dk, kBf16Tolerance, "dk");
  expect_close(download_checked(dv_d, n, "dv"), grads.dv, kBf16Tolerance, "dv");
  EXPECT_TRUE(same_bytes(o_d.download(), o_bits)) << "backward changed o";
  EXPECT_TRUE(same_bytes(lse_d.download(), lse_values)) << "backward changed lse";
  EXPECT_TRUE(same_bytes(dout_d.download(), dout.bits)) << "backward changed dout";
}

// T = 1 (one partial tile), T < 64, T not a multiple of 64, exact multiples, many
// tiles with a peaked softmax, and several (batch, head) slices.
TEST(AttentionGpu, B2H3T200D64) {
  TRAINSIM_REQUIRE_GPU();
  check_against_reference({2, 3, 200, 64}, 1.0F);
}

TEST(AttentionGpu, B1H2T256D128) {
  TRAINSIM_REQUIRE_GPU();
  check_against_reference({1, 2, 256, 128}, 1.0F);
}

TEST(AttentionGpu, SingleTokenD64) {
  TRAINSIM_REQUIRE_GPU();
  check_against_reference({1, 1, 1, 64}, 1.0F);
}

TEST(AttentionGpu, SingleTokenD128) {
  TRAINSIM_REQUIRE_GPU();
  check_against_reference({1, 1, 1, 128}, 1.0F);
}

TEST(AttentionGpu, B2H1T37D128) {
  TRAINSIM_REQUIRE_GPU();
  check_against_reference({2, 1, 37, 128}, 1.0F);
}

TEST(AttentionGpu, B1H2T64D64) {
  TRAINSIM_REQUIRE_GPU();
  check_against_reference({1, 2, 64, 64}, 1.0F);
}

TEST(AttentionGpu, B4H8T96D64) {
  TRAINSIM_REQUIRE_GPU();
  check_against_reference({4, 8, 96, 64}, 1.0F);
}

TEST(AttentionGpu, PeakedB1H1T700D128) {
  TRAINSIM_REQUIRE_GPU();
  check_against_reference({1, 1, 700, 128}, 3.0F);
}

TEST(AttentionGpu, PeakedB1H2T333D64) {
  TRAINSIM_REQUIRE_GPU();
  check_against_reference({1, 2, 333, 64}, 3.0F);
}

// Shape checks come before any device access, so these run without a GPU.
TEST(AttentionArguments, RejectsUnsupportedShapesBeforeTouchingTheDevice) {
  const auto forward = [](AttentionShape s) {
    attention_forward(nullptr, nullptr, nullptr, nullptr, nullptr, s, nullptr);
  };
  const auto backward = [](AttentionShape s) {
    attention_backward(nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, s,
                       nullptr);
  };
  for (const AttentionShape s :
       {AttentionShape{1, 1, 16, 96}, AttentionShape{1, 1, 0, 64}, AttentionShape{0, 1, 16, 64},
        AttentionShape{1, -2, 16, 128}, AttentionShape{1, 1, 16, 0}}) {
    EXPECT_THROW(forward(s), std::invalid_argument) << describe(s);
    EXPECT_THROW(backward(s), std::invalid_argument) << describe(s);
    EXPECT_THROW(static_cast<void>(attention_backward_workspace_bytes(s)), std::invalid_argument) << describe(s);
  }
  try {
    forward(AttentionShape{1, 1, 16, 96});
    ADD_FAILURE() << "head_dim 96 accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("head_dim must be 64 or 128"), std::string::npos) << e.what();
  }
  EXPECT_THROW(forward(AttentionShape{1, 1, 16, 64}), std::invalid_argument) << "null pointers accepted";
}

// delta (B H T fp32, rounded up to 256 bytes) then the dq accumulator (B H T D fp32).
TEST(AttentionArguments, WorkspaceHoldsDeltaAndTheFp32DqAccumulator) {
  // B H T = 1200 rows: 4800 bytes of delta -> 4864; 1200 * 64 * 4 = 307200 for dq.
  EXPECT_EQ(attention_backward_workspace_bytes(AttentionShape{2, 3, 200, 64}), 4864U + 307200U);
}

TEST(AttentionArguments, RejectsNullAndMisalignedPointers) {
  TRAINSIM_REQUIRE_GPU();
  const AttentionShape s{1, 1, 64, 64};
  const std::size_t n = elements(s);
  DeviceBuffer<bf16> a(n + 8);
  DeviceBuffer<bf16> b(n + 8);
  DeviceBuffer<float> lse(rows(s));
  DeviceBuffer<unsigned char> workspace(attention_backward_workspace_bytes(s));
  EXPECT_THROW(attention_forward(a.get(), nullptr, a.get(), b.get(), lse.get(), s, nullptr), std::invalid_argument);
  EXPECT_THROW(attention_forward(a.get(), a.get(), a.get(), b.get(), nullptr, s, nullptr), std::invalid_argument);
  // One element in: 2 bytes off the 16-byte alignment the vector loads need.
  EXPECT_THROW(attention_forward(a.get() + 1, a.get(), a.get(), b.get(), lse.get(), s, nullptr), std::invalid_argument);
  EXPECT_THROW(attention_backward(a.get(), a.get(), a.get(), a.get(), a.get(), lse.get(), b.get(), b.get(), b.get(),
                                  nullptr, s, nullptr),
               std::invalid_argument);
  EXPECT_THROW(attention_backward(a.get(), a.get(), a.get(), a.get(), a.get(), lse.get(), b.get() + 1, b.get(), b.get(),
                                  workspace.get(), s, nullptr),
               std::invalid_argument);
  TRAINSIM_CUDA_CHECK(cudaDeviceSynchronize());
}

}  // namespace
}  // namespace trainsim::kernels
