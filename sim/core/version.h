#pragma once
// The simulator's version, as `trainsim --version` prints it; journals of long
// runs record it, so a run is never resumed from another version's results.
namespace trainsim::core {

inline constexpr const char* kVersion = "0.1.0";

}  // namespace trainsim::core
