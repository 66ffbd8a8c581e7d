#include "report/result_keys.h"

namespace trainsim::report {

using nlohmann::ordered_json;

ordered_json optional_number(const std::optional<double>& v) { return v ? ordered_json(*v) : ordered_json(nullptr); }

void put_timing(ordered_json& j, const std::optional<Timing>& t) {
  using namespace result_key;
  const auto value = [&](double Timing::*field) { return t ? ordered_json((*t).*field) : ordered_json(nullptr); };
  j[kIterationTime] = value(&Timing::iteration_time_s);
  j[kTokensPerS] = value(&Timing::tokens_per_s);
  j[kModelFlops] = value(&Timing::model_flops_per_iteration);
  j[kTflopsPerGpu] = value(&Timing::tflops_per_gpu);
  j[kMfu] = value(&Timing::mfu);
  if (!t) {
    j[kBreakdown] = nullptr;
    return;
  }
  const Breakdown& b = t->breakdown_s;
  j[kBreakdown] = {{"compute", b.compute},
                   {"exposed_communication", b.exposed_communication},
                   {"pipeline_bubble", b.pipeline_bubble},
                   {"optimizer", b.optimizer},
                   {"other", b.other}};
}

void put_totals(ordered_json& j, const std::optional<double>& time_to_train_s, const std::optional<double>& cost_usd,
                const std::optional<double>& energy_kwh) {
  j[result_key::kTimeToTrain] = optional_number(time_to_train_s);
  j[result_key::kCost] = optional_number(cost_usd);
  j[result_key::kEnergy] = optional_number(energy_kwh);
}

}  // namespace trainsim::report
