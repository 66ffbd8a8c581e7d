#pragma once
// Numeric formats of training (the scenario's training.precision).
#include <cstddef>
#include <optional>
#include <string_view>

namespace trainsim::hw {

// kFp8 and kFp4 as training precisions are recipes over a 16-bit model: Transformer
// Engine's linear layers quantize their GEMM operands (FP8; NVFP4, 4-bit E2M1 with an
// E4M3 scale per 16 elements), the rest runs in bf16 (docs/model.md, "FP8 recipes",
// "FP4 recipes").
enum class Precision { kFp32, kTf32, kFp16, kBf16, kFp8, kFp4 };
inline constexpr std::size_t kNumPrecisions = 6;

std::string_view to_string(Precision p);
std::optional<Precision> precision_from_string(std::string_view s);

// Bytes of one stored element (tf32 is stored as fp32; fp4 with its block scale:
// 0.5 + 1/16).
double bytes_per_element(Precision p);

// A recipe whose linear layers' GEMMs run quantized (fp8, fp4) over a 16-bit model.
[[nodiscard]] constexpr bool quantized_gemms(Precision p) { return p == Precision::kFp8 || p == Precision::kFp4; }

}  // namespace trainsim::hw
