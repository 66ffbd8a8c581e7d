#include "report/prediction_interval.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace trainsim::report {

namespace {
constexpr const char* kRecordedWith =
    "trainsim validate --corpus tests/validation/corpus --record-model-error scenarios/accuracy/model_error.json";
constexpr const char* kBasis =
    "measured / predicted iteration time over the public corpus cases not held out (tests/validation/corpus); "
    "P10 and P90 by the split-conformal ranks floor(0.1 (n + 1)) and ceil(0.9 (n + 1)) of the n sorted ratios, "
    "P50 their median (docs/model.md, 'Prediction interval')";
}  // namespace

config::ModelErrorRecord model_error_from_ratios(std::vector<double> ratios) {
  if (ratios.empty()) throw std::invalid_argument("model_error_from_ratios: no ratios");
  for (double r : ratios)
    if (!(r > 0.0) || !std::isfinite(r)) throw std::invalid_argument("model_error_from_ratios: a ratio is not > 0");
  std::sort(ratios.begin(), ratios.end());
  const auto n = static_cast<long long>(ratios.size());
  // 1-based ranks, clamped to the sample (Lei et al. 2018, split conformal).
  const long long lo = std::clamp(static_cast<long long>(std::floor(0.1 * static_cast<double>(n + 1))), 1LL, n);
  const long long hi = std::clamp(static_cast<long long>(std::ceil(0.9 * static_cast<double>(n + 1))), 1LL, n);
  config::ModelErrorRecord r;
  r.cases = static_cast<int>(n);
  r.ratio_p10 = ratios[static_cast<std::size_t>(lo - 1)];
  r.ratio_p90 = ratios[static_cast<std::size_t>(hi - 1)];
  r.ratio_p50 = 0.5 * (ratios[static_cast<std::size_t>((n - 1) / 2)] + ratios[static_cast<std::size_t>(n / 2)]);
  r.recorded_with = kRecordedWith;
  return r;
}

config::ModelErrorRecord model_error_record(const CorpusReport& r) {
  std::vector<double> ratios;
  for (const CorpusRow& row : r.rows)
    if (!row.held_out && row.predicted_s) ratios.push_back(row.measured_s / *row.predicted_s);
  return model_error_from_ratios(std::move(ratios));
}

nlohmann::ordered_json model_error_json(const config::ModelErrorRecord& r) {
  return {{"format", "trainsim-model-error"}, {"version", 1},       {"recorded_with", r.recorded_with},
          {"basis", kBasis},                  {"cases", r.cases},    {"ratio_p10", r.ratio_p10},
          {"ratio_p50", r.ratio_p50},         {"ratio_p90", r.ratio_p90}};
}

PredictionInterval prediction_interval(double iteration_time_s, const config::ModelErrorRecord& r) {
  return {iteration_time_s * r.ratio_p10, iteration_time_s * r.ratio_p50, iteration_time_s * r.ratio_p90, r.cases};
}

}  // namespace trainsim::report
