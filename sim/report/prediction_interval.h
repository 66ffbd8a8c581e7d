#pragma once
// The prediction interval (docs/model.md, "Prediction interval"): where a real
// run's step time is likely to fall given trainsim's prediction, from the
// simulator's track record on the public validation corpus. Split conformal
// prediction (Vovk, Gammerman & Shafer, "Algorithmic Learning in a Random World",
// 2005; Lei et al., "Distribution-free predictive inference for regression",
// JASA 2018) on the ratio measured / predicted: over n calibration cases the
// interval [T r_(lo), T r_(hi)] with lo = floor(0.1 (n + 1)), hi = ceil(0.9 (n + 1))
// of the sorted ratios holds a new case's measured time with probability at
// least 80% when the new case is exchangeable with the calibration cases.
#include <vector>

#include <nlohmann/json.hpp>

#include "config/model_error.h"
#include "report/corpus_report.h"
#include "report/metrics.h"

namespace trainsim::report {

// The quantiles of `ratios` (measured / predicted, each > 0; at least one):
// P10 and P90 by the split-conformal ranks above (clamped to 1..n), P50 the median.
config::ModelErrorRecord model_error_from_ratios(std::vector<double> ratios);

// From a corpus report: the cases not held out that were predicted.
config::ModelErrorRecord model_error_record(const CorpusReport& r);

// The record as scenarios/accuracy/model_error.json holds it.
nlohmann::ordered_json model_error_json(const config::ModelErrorRecord& r);

// T times the record's ratios.
PredictionInterval prediction_interval(double iteration_time_s, const config::ModelErrorRecord& r);

}  // namespace trainsim::report
