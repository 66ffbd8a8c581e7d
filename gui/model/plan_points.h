#pragma once
// The options of a plan (`trainsim plan SPEC --out PLAN.json`; docs/sweep.md,
// "Owned clusters") for the picture of time to train against cost
// (view/plan_plot.h).
#include <string>
#include <string_view>
#include <vector>

namespace trainsim::gui {

struct PlanPoint {
  std::string cluster;
  double time_to_train_s = 0.0;  // p50
  double cost_usd = 0.0;         // owned total where given, else the cloud's
  bool owned = false;
  bool pareto = false;
};

struct PlanPlotData {
  std::string name;
  std::vector<PlanPoint> points;  // the options with a time and a cost
  int without_cost = 0;           // options left out: nothing fits, or no price
};

// Whether `text` is a plan (an object with "plan" and "options").
bool is_plan(std::string_view text);
// Throws ReadError naming `source` and the place when an option's figures are malformed.
PlanPlotData parse_plan_text(std::string_view text, std::string_view source);

}  // namespace trainsim::gui
