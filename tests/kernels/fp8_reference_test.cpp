// The FP8 cast reference (kernels/reference/fp8_ref.h) against the OCP FP8 tables
// (Micikevicius et al. 2022, "FP8 Formats for Deep Learning", Table 1): largest and
// smallest values, round to nearest even at hand-picked halfway points, saturation,
// and every one of the 2 x 256 codes decoding and re-encoding to itself.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "fp8_ref.h"

namespace {

using trainsim::kernels::ref::Fp8;
using trainsim::kernels::ref::fp8_cast;
using trainsim::kernels::ref::fp8_decode;
using trainsim::kernels::ref::fp8_encode;

TEST(Fp8Reference, E4M3Table) {
  EXPECT_EQ(fp8_encode(1.0F, Fp8::kE4M3), 0x38);     // 0.0111.000: 2^(7-7)
  EXPECT_EQ(fp8_encode(448.0F, Fp8::kE4M3), 0x7E);   // largest finite
  EXPECT_EQ(fp8_encode(-448.0F, Fp8::kE4M3), 0xFE);
  EXPECT_EQ(fp8_encode(0.015625F, Fp8::kE4M3), 0x08);  // smallest normal 2^-6
  EXPECT_EQ(fp8_encode(std::ldexp(1.0F, -9), Fp8::kE4M3), 0x01);  // smallest subnormal
  EXPECT_EQ(fp8_encode(std::ldexp(1.0F, -11), Fp8::kE4M3), 0x00);  // a quarter of it: 0
  EXPECT_EQ(fp8_decode(0x7E, Fp8::kE4M3), 448.0F);
  EXPECT_TRUE(std::isnan(fp8_decode(0x7F, Fp8::kE4M3)));
  EXPECT_EQ(fp8_decode(0x01, Fp8::kE4M3), std::ldexp(1.0F, -9));
}

TEST(Fp8Reference, E5M2Table) {
  EXPECT_EQ(fp8_encode(1.0F, Fp8::kE5M2), 0x3C);       // 0.01111.00
  EXPECT_EQ(fp8_encode(57344.0F, Fp8::kE5M2), 0x7B);   // largest finite
  EXPECT_EQ(fp8_encode(std::ldexp(1.0F, -14), Fp8::kE5M2), 0x04);  // smallest normal
  EXPECT_EQ(fp8_encode(std::ldexp(1.0F, -16), Fp8::kE5M2), 0x01);  // smallest subnormal
  EXPECT_EQ(fp8_decode(0x7B, Fp8::kE5M2), 57344.0F);
  EXPECT_TRUE(std::isinf(fp8_decode(0x7C, Fp8::kE5M2)));
}

TEST(Fp8Reference, RoundsToNearestEven) {
  // E4M3 in [1, 2): steps of 1/8. 1 + 1/16 is halfway between 1 (even mantissa 000) and
  // 1.125 (001): to 1. 1 + 3/16 is halfway between 1.125 (001) and 1.25 (010): to 1.25.
  EXPECT_EQ(fp8_decode(fp8_encode(1.0625F, Fp8::kE4M3), Fp8::kE4M3), 1.0F);
  EXPECT_EQ(fp8_decode(fp8_encode(1.1875F, Fp8::kE4M3), Fp8::kE4M3), 1.25F);
  EXPECT_EQ(fp8_decode(fp8_encode(1.07F, Fp8::kE4M3), Fp8::kE4M3), 1.125F);  // past halfway
  // The carry into the next binade: 1.9375 is halfway between 1.875 (111) and 2: to 2.
  EXPECT_EQ(fp8_encode(1.9375F, Fp8::kE4M3), 0x40);
  // E5M2 in [1, 2): steps of 1/4. 1.125 -> 1 (even), 1.375 -> 1.5 (even).
  EXPECT_EQ(fp8_decode(fp8_encode(1.125F, Fp8::kE5M2), Fp8::kE5M2), 1.0F);
  EXPECT_EQ(fp8_decode(fp8_encode(1.375F, Fp8::kE5M2), Fp8::kE5M2), 1.5F);
  // Subnormal halfway: 1.5 x 2^-9 lies between 2^-9 (001) and 2^-8 (010): to 2^-8.
  EXPECT_EQ(fp8_encode(1.5F * std::ldexp(1.0F, -9), Fp8::kE4M3), 0x02);
}

TEST(Fp8Reference, SaturatesToTheLargestFiniteValue) {
  EXPECT_EQ(fp8_encode(460.0F, Fp8::kE4M3), 0x7E);
  EXPECT_EQ(fp8_encode(1e30F, Fp8::kE4M3), 0x7E);
  EXPECT_EQ(fp8_encode(-INFINITY, Fp8::kE4M3), 0xFE);
  EXPECT_EQ(fp8_encode(1e9F, Fp8::kE5M2), 0x7B);
}

TEST(Fp8Reference, EveryCodeRoundTrips) {
  for (Fp8 f : {Fp8::kE4M3, Fp8::kE5M2}) {
    for (int c = 0; c < 256; ++c) {
      const auto code = static_cast<std::uint8_t>(c);
      const float v = fp8_decode(code, f);
      if (std::isnan(v) || std::isinf(v)) continue;
      const std::uint8_t back = fp8_encode(v, f);
      if (v == 0.0F) EXPECT_EQ(back & 0x7F, 0) << c;  // +0 and -0
      else EXPECT_EQ(back, code) << "format " << static_cast<int>(f) << " code " << c << " value " << v;
    }
  }
}

TEST(Fp8Reference, CastScalesAndTracksAmax) {
  const std::vector<float> in{0.5F, -3.0F, 2.0F, NAN};
  std::vector<std::uint8_t> out(in.size());
  EXPECT_EQ(fp8_cast(out, in, 4.0F, Fp8::kE4M3), 3.0F);  // NaN skipped
  EXPECT_EQ(fp8_decode(out[0], Fp8::kE4M3), 2.0F);
  EXPECT_EQ(fp8_decode(out[1], Fp8::kE4M3), -12.0F);
  EXPECT_EQ(fp8_decode(out[2], Fp8::kE4M3), 8.0F);
  EXPECT_TRUE(std::isnan(fp8_decode(out[3], Fp8::kE4M3)));
  EXPECT_EQ(trainsim::kernels::ref::fp8_cast_bytes(1000), 3000u);
  EXPECT_EQ(trainsim::kernels::ref::fp8_cast_transpose_bytes(1000), 4000u);
}

}  // namespace
