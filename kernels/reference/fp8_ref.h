#pragma once
// CPU reference of the FP8 casts (trainsim/kernels/fp8.h) and the fewest HBM bytes the
// GPU kernels move. The encoding is the OCP FP8 one (Micikevicius et al. 2022, Table 1):
//   E4M3: bias 7, 3 mantissa bits, largest finite 448 (S.1111.110), smallest subnormal 2^-9
//   E5M2: bias 15, 2 mantissa bits, largest finite 57344 (S.11110.11), smallest subnormal 2^-16
// Rounding is to nearest even; magnitudes at or beyond the largest finite value saturate
// to it (CUDA's __NV_SATFINITE). NaN encodes as the format's NaN (E4M3 S.1111.111,
// E5M2 S.11111.11).
#include <cstddef>
#include <cstdint>
#include <span>

namespace trainsim::kernels::ref {

enum class Fp8 { kE4M3, kE5M2 };

[[nodiscard]] std::uint8_t fp8_encode(float x, Fp8 format);
[[nodiscard]] float fp8_decode(std::uint8_t bits, Fp8 format);
[[nodiscard]] float fp8_max(Fp8 format);  // 448 or 57344

// out[i] = fp8_encode(in[i] * scale) with the product in float, as the GPU computes it;
// returns max |in[i]| over the non-NaN inputs (0 for none).
float fp8_cast(std::span<std::uint8_t> out, std::span<const float> in, float scale, Fp8 format);

// Bytes: a bf16 read and an fp8 write per element; cast_transpose writes two copies.
[[nodiscard]] std::size_t fp8_cast_bytes(std::size_t n);
[[nodiscard]] std::size_t fp8_cast_transpose_bytes(std::size_t n);

}  // namespace trainsim::kernels::ref
