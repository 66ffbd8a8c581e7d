// The FP8 casts (trainsim/kernels/fp8.h) against the CPU reference (fp8_ref.h), bit for
// bit: the GPU's cvt.rn.satfinite and the reference both round the same float product
// once, so every output byte and amax must agree exactly. Fresh random inputs each run
// (the seed is printed), with a spread wide enough to reach saturation and subnormals;
// outputs poisoned (0xFF bytes) with a guard tail; sizes odd and unaligned to cover the
// vector path, its scalar tail and partial transpose tiles.
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "fp8_ref.h"
#include "gpu_available.h"
#include "trainsim/kernels/device_buffer.h"
#include "trainsim/kernels/fp8.h"

namespace {

namespace tk = trainsim::kernels;
namespace ref = trainsim::kernels::ref;
using bf16 = __nv_bfloat16;
using tk::DeviceBuffer;

constexpr std::size_t kGuard = 64;

struct Input {
  std::vector<bf16> bits;
  std::vector<float> values;
};

// Log-uniform magnitudes over 2^-20 .. 2^12 with random signs: with scale 1 that spans
// E4M3's subnormals, normals and saturation (448), E5M2's too with a larger scale.
Input random_input(std::size_t n, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> exponent(-20.0F, 12.0F);
  std::bernoulli_distribution negative(0.5);
  Input in{std::vector<bf16>(n), std::vector<float>(n)};
  for (std::size_t i = 0; i < n; ++i) {
    const float x = std::exp2(exponent(rng)) * (negative(rng) ? -1.0F : 1.0F);
    in.bits[i] = __float2bfloat16(x);
    in.values[i] = __bfloat162float(in.bits[i]);
  }
  return in;
}

std::uint32_t fresh_seed() {
  const std::uint32_t seed = std::random_device{}();
  std::cout << "[ seed     ] " << seed << '\n';
  return seed;
}

ref::Fp8 ref_format(tk::Fp8Format f) { return f == tk::Fp8Format::kE4M3 ? ref::Fp8::kE4M3 : ref::Fp8::kE5M2; }

struct Scalars {
  DeviceBuffer<float> amax_scale{2};
  Scalars(float amax, float scale) {
    const std::vector<float> v{amax, scale};
    amax_scale.upload(v);
  }
  float* amax() { return amax_scale.get(); }
  const float* scale() { return amax_scale.get() + 1; }
  float amax_value() const { return amax_scale.download()[0]; }
};

// The first n bytes; fails if the guard tail was written.
std::vector<std::uint8_t> download_checked(const DeviceBuffer<std::uint8_t>& d, std::size_t n, const char* name) {
  std::vector<std::uint8_t> all = d.download();
  std::size_t written = 0;
  for (std::size_t i = n; i < all.size(); ++i) written += all[i] != 0xFF ? 1u : 0u;
  EXPECT_EQ(written, 0u) << name << ": bytes written past the end";
  all.resize(n);
  return all;
}

std::size_t mismatches(const std::vector<std::uint8_t>& got, const std::vector<std::uint8_t>& want) {
  std::size_t bad = 0;
  for (std::size_t i = 0; i < want.size(); ++i) bad += got[i] != want[i] ? 1u : 0u;
  return bad;
}

class Fp8Cast : public ::testing::TestWithParam<tk::Fp8Format> {};

TEST_P(Fp8Cast, MatchesTheReferenceBitForBit) {
  TRAINSIM_REQUIRE_GPU();
  const tk::Fp8Format format = GetParam();
  const float scale = format == tk::Fp8Format::kE4M3 ? 1.0F : 16.0F;
  for (std::size_t n : {std::size_t{1}, std::size_t{7}, std::size_t{4099}, std::size_t{1} << 20}) {
    SCOPED_TRACE("n " + std::to_string(n));
    const Input in = random_input(n, fresh_seed());
    std::vector<std::uint8_t> want(n);
    const float want_amax = ref::fp8_cast(want, in.values, scale, ref_format(format));
    // One element past an aligned start: the unaligned (scalar) path; the aligned start: vectors.
    for (std::size_t offset : {std::size_t{0}, std::size_t{1}}) {
      DeviceBuffer<bf16> d_in(n + offset);
      std::vector<bf16> padded(n + offset, __float2bfloat16(0.0F));
      std::copy(in.bits.begin(), in.bits.end(), padded.begin() + static_cast<std::ptrdiff_t>(offset));
      d_in.upload(padded);
      DeviceBuffer<std::uint8_t> out(n + kGuard);
      out.fill_bytes(0xFF);
      Scalars s(0.5F, scale);  // a previous amax below the inputs' is raised
      tk::fp8_cast(out.get(), s.amax(), d_in.get() + offset, s.scale(), n, format, nullptr);
      ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
      EXPECT_EQ(mismatches(download_checked(out, n, "fp8_cast"), want), 0u) << "offset " << offset;
      EXPECT_EQ(s.amax_value(), std::fmax(want_amax, 0.5F)) << "offset " << offset;
    }
  }
}

TEST_P(Fp8Cast, CastTransposeWritesBothLayouts) {
  TRAINSIM_REQUIRE_GPU();
  const tk::Fp8Format format = GetParam();
  const float scale = format == tk::Fp8Format::kE4M3 ? 2.0F : 64.0F;
  for (const auto& [rows, cols] : std::vector<std::pair<int, int>>{
           {1, 1}, {33, 70}, {256, 768}, {1000, 129}, {8, 8}, {1000, 136}, {72, 4096}}) {
    SCOPED_TRACE(std::to_string(rows) + " x " + std::to_string(cols));
    const auto n = static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols);
    const Input in = random_input(n, fresh_seed());
    std::vector<std::uint8_t> want(n), want_t(n);
    const float want_amax = ref::fp8_cast(want, in.values, scale, ref_format(format));
    for (int r = 0; r < rows; ++r)
      for (int c = 0; c < cols; ++c)
        want_t[static_cast<std::size_t>(c) * static_cast<std::size_t>(rows) + static_cast<std::size_t>(r)] =
            want[static_cast<std::size_t>(r) * static_cast<std::size_t>(cols) + static_cast<std::size_t>(c)];
    DeviceBuffer<bf16> d_in(n);
    d_in.upload(in.bits);
    DeviceBuffer<std::uint8_t> out(n + kGuard), out_t(n + kGuard);
    out.fill_bytes(0xFF);
    out_t.fill_bytes(0xFF);
    Scalars s(0.0F, scale);
    tk::fp8_cast_transpose(out.get(), out_t.get(), s.amax(), d_in.get(), s.scale(), rows, cols, format, nullptr);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    EXPECT_EQ(mismatches(download_checked(out, n, "out"), want), 0u);
    EXPECT_EQ(mismatches(download_checked(out_t, n, "out_t"), want_t), 0u);
    EXPECT_EQ(s.amax_value(), want_amax);
  }
}

INSTANTIATE_TEST_SUITE_P(Formats, Fp8Cast, ::testing::Values(tk::Fp8Format::kE4M3, tk::Fp8Format::kE5M2),
                         [](const auto& p) { return p.param == tk::Fp8Format::kE4M3 ? "e4m3" : "e5m2"; });

TEST(Fp8CastErrors, RejectBadArgumentsBeforeLaunching) {
  TRAINSIM_REQUIRE_GPU();
  Scalars s(0.0F, 1.0F);
  DeviceBuffer<bf16> in(16);
  DeviceBuffer<std::uint8_t> out(16);
  EXPECT_THROW(tk::fp8_cast(out.get(), s.amax(), in.get(), s.scale(), 0, tk::Fp8Format::kE4M3, nullptr),
               std::invalid_argument);
  EXPECT_THROW(tk::fp8_cast(out.get(), s.amax(), in.get(), nullptr, 16, tk::Fp8Format::kE4M3, nullptr),
               std::invalid_argument);
  EXPECT_THROW(tk::fp8_cast_transpose(out.get(), nullptr, s.amax(), in.get(), s.scale(), 4, 4, tk::Fp8Format::kE4M3,
                                      nullptr),
               std::invalid_argument);
  EXPECT_THROW(tk::fp8_cast_transpose(out.get(), out.get(), s.amax(), in.get(), s.scale(), 4, -1,
                                      tk::Fp8Format::kE4M3, nullptr),
               std::invalid_argument);
}

}  // namespace
