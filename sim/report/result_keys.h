#pragma once
// The result file's contract keys (DESIGN.md, "Result file"; docs/results.md),
// named once for the three places that write them (`run`'s result file,
// report/result_json.cpp; every point of a sweep, sweep/outcome.cpp) and the
// GUI that reads them (gui/model/run.cpp). put_timing() and put_totals() write
// the blocks the run and a sweep point share, in the file's order.
#include <optional>

#include <nlohmann/json.hpp>

#include "report/metrics.h"

namespace trainsim::report::result_key {

inline constexpr const char* kScenario = "scenario";
inline constexpr const char* kNumGpus = "num_gpus";
inline constexpr const char* kIterationTime = "iteration_time_s";
inline constexpr const char* kIterationTimeInterval = "iteration_time_interval_s";
inline constexpr const char* kPredictionInterval = "prediction_interval_s";
inline constexpr const char* kTokensPerS = "tokens_per_s";
inline constexpr const char* kModelFlops = "model_flops_per_iteration";
inline constexpr const char* kTflopsPerGpu = "tflops_per_gpu";
inline constexpr const char* kMfu = "mfu";
inline constexpr const char* kBreakdown = "breakdown_s";
inline constexpr const char* kMemory = "memory";
inline constexpr const char* kPeakBytes = "peak_bytes_per_gpu";        // in "memory"
inline constexpr const char* kCapacityBytes = "capacity_bytes_per_gpu";  // in "memory"
inline constexpr const char* kFits = "fits";                             // in "memory"
inline constexpr const char* kTimeToTrain = "time_to_train_s";
inline constexpr const char* kCost = "cost_usd";
inline constexpr const char* kEnergy = "energy_kwh";
inline constexpr const char* kReliability = "reliability";
inline constexpr const char* kGoodput = "goodput";                               // in "reliability"
inline constexpr const char* kExpectedInterruptions = "expected_interruptions";  // in "reliability"
inline constexpr const char* kRunTimeline = "run_timeline";                      // in "reliability"
inline constexpr const char* kTimeline = "timeline";
inline constexpr const char* kPeakFlopsPerGpu = "peak_flops_per_gpu";

}  // namespace trainsim::report::result_key

namespace trainsim::report {

// What a timed layout reports per iteration.
struct Timing {
  double iteration_time_s = 0;
  double tokens_per_s = 0;
  double model_flops_per_iteration = 0;
  double tflops_per_gpu = 0;
  double mfu = 0;
  Breakdown breakdown_s;
};

// iteration_time_s, tokens_per_s, model_flops_per_iteration, tflops_per_gpu,
// mfu and breakdown_s; each null without a timing (a sweep point that does not fit).
void put_timing(nlohmann::ordered_json& j, const std::optional<Timing>& t);
// time_to_train_s, cost_usd and energy_kwh; null where not known.
void put_totals(nlohmann::ordered_json& j, const std::optional<double>& time_to_train_s,
                const std::optional<double>& cost_usd, const std::optional<double>& energy_kwh);
// A number, or null.
nlohmann::ordered_json optional_number(const std::optional<double>& v);

}  // namespace trainsim::report
