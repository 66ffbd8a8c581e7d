#pragma once
// The simulator's track record on the public validation corpus (docs/model.md,
// "Prediction interval"): quantiles of measured / predicted step time over the
// corpus cases not held out, recorded by `trainsim validate --corpus DIR
// --record-model-error scenarios/accuracy/model_error.json` and shipped with the binary.
#include <string>

namespace trainsim::config {

struct ModelErrorRecord {
  int cases = 0;            // predicted corpus cases the ratios come from
  double ratio_p10 = 1.0;   // measured / predicted: the split-conformal lower quantile
  double ratio_p50 = 1.0;   // the median
  double ratio_p90 = 1.0;   // the upper quantile
  std::string recorded_with;  // the command
};

}  // namespace trainsim::config
