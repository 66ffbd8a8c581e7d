#include "scenario/model_error_reader.h"

#include <limits>

#include "scenario/embedded_presets.h"
#include "scenario/json_fields.h"
#include "scenario/errors.h"

namespace trainsim::scenario {

config::ModelErrorRecord parse_model_error(const nlohmann::json& j, const std::string& file) {
  const ObjectReader o(j, file, "",
                       {"format", "version", "recorded_with", "basis", "cases", "ratio_p10", "ratio_p50", "ratio_p90"});
  (void)o.choice("format", {"trainsim-model-error"});
  (void)o.integer("version", 1, 1);
  config::ModelErrorRecord r;
  r.cases = static_cast<int>(o.integer("cases", 1, 1'000'000));
  constexpr double kMax = 1e6;
  r.ratio_p10 = o.number("ratio_p10", std::numeric_limits<double>::min(), kMax);
  r.ratio_p50 = o.number("ratio_p50", r.ratio_p10, kMax);
  r.ratio_p90 = o.number("ratio_p90", r.ratio_p50, kMax);
  r.recorded_with = o.text("recorded_with", "");
  return r;
}

const config::ModelErrorRecord& shipped_model_error() {
  static const config::ModelErrorRecord record = [] {
    constexpr std::string_view kKey = "accuracy/model_error.json";
    // Built in from the source tree and checked by the test suite: a broken one is a build defect.
    return parse_model_error(nlohmann::json::parse(embedded_presets().at(kKey)), std::string(kKey));
  }();
  return record;
}

}  // namespace trainsim::scenario
