#include "hardware/precision.h"

#include <array>
#include <utility>

namespace trainsim::hw {

namespace {
constexpr std::array<std::pair<Precision, std::string_view>, 6> kNames{{
    {Precision::kFp32, "fp32"},
    {Precision::kTf32, "tf32"},
    {Precision::kFp16, "fp16"},
    {Precision::kBf16, "bf16"},
    {Precision::kFp8, "fp8"},
    {Precision::kFp4, "fp4"},
}};
}  // namespace

std::string_view to_string(Precision p) {
  for (const auto& [value, name] : kNames)
    if (value == p) return name;
  return "unknown";
}

std::optional<Precision> precision_from_string(std::string_view s) {
  for (const auto& [value, name] : kNames)
    if (name == s) return value;
  return std::nullopt;
}

double bytes_per_element(Precision p) {
  switch (p) {
    case Precision::kFp32:
    case Precision::kTf32: return 4.0;
    case Precision::kFp16:
    case Precision::kBf16: return 2.0;
    case Precision::kFp8: return 1.0;
    // NVFP4 (Transformer Engine's NVFP4BlockScaling): a 4-bit E2M1 element and one
    // E4M3 scale per 16 (the per-tensor fp32 scale is negligible).
    case Precision::kFp4: return 0.5 + 1.0 / 16.0;
  }
  return 4.0;
}

}  // namespace trainsim::hw
