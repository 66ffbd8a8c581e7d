#pragma once
// Numeric formats of training (the scenario's training.precision).
#include <optional>
#include <string_view>

namespace trainsim::hw {

enum class Precision { kFp32, kTf32, kFp16, kBf16, kFp8 };

std::string_view to_string(Precision p);
std::optional<Precision> precision_from_string(std::string_view s);

// Bytes of one stored element (tf32 is stored as fp32).
double bytes_per_element(Precision p);

}  // namespace trainsim::hw
