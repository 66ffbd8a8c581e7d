#pragma once
// Simulated time: an integer count of nanoseconds. Never ordered by floats
// (ns-3's rule): two events at the same tick run in scheduling order.
#include <cstdint>

namespace trainsim::core {

using Time = std::int64_t;  // nanoseconds since the start of the simulation

inline constexpr Time kNanosecond = 1;
inline constexpr Time kMicrosecond = 1'000;
inline constexpr Time kMillisecond = 1'000'000;
inline constexpr Time kSecond = 1'000'000'000;

// Rounds to the nearest nanosecond. Throws std::domain_error for negative,
// non-finite or too large (> ~292 years) durations.
Time from_seconds(double seconds);
double to_seconds(Time t);

}  // namespace trainsim::core
