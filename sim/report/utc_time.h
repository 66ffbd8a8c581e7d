#pragma once
// The wall-clock date written into output files that record when they were made
// (calibration profiles, measured-run files); never into simulation results,
// which must not depend on the clock.
#include <ctime>
#include <string>

namespace trainsim::report {

// Now in UTC, ISO 8601: 2026-11-23T05:00:24Z.
inline std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace trainsim::report
