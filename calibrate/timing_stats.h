#pragma once
// The statistics of a measurement's timed repetitions (CPU only, so the CPU tests
// check them): trainsim-calibrate's Timer fills a Timing from CUDA-event samples.
#include <vector>

#include <nlohmann/json.hpp>

namespace trainsim::calibrate {

// The repetitions' times: the median prices work; the rest is their spread (issue #11's
// run-to-run variability), with quantiles by linear interpolation between order
// statistics (Hyndman and Fan's type 7, numpy's default).
struct Timing {
  double median_s = 0.0;
  double min_s = 0.0;
  double p10_s = 0.0, p25_s = 0.0, p75_s = 0.0, p90_s = 0.0;
  double max_s = 0.0;
  double mean_s = 0.0;
  double stddev_s = 0.0;  // sample standard deviation (n - 1); 0 for one repetition
  int repeats = 0;
};

// The Timing of `samples` (seconds, any order, at least one).
[[nodiscard]] Timing summarize(std::vector<double> samples);
// {"min", "p10", "p25", "p75", "p90", "max", "mean", "stddev"} in seconds: the profile
// rows' "distribution_s" (docs/calibration.md).
[[nodiscard]] nlohmann::json distribution_json(const Timing& t);

}  // namespace trainsim::calibrate
