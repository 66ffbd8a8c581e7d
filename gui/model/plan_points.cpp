#include "model/plan_points.h"

#include <nlohmann/json.hpp>

#include "model/timeline_reader.h"

namespace trainsim::gui {

bool is_plan(std::string_view text) {
  const nlohmann::json j = nlohmann::json::parse(text.begin(), text.end(), nullptr, false);
  return !j.is_discarded() && j.is_object() && j.contains("plan") && j.contains("options");
}

PlanPlotData parse_plan_text(std::string_view text, std::string_view source) {
  const nlohmann::json j = nlohmann::json::parse(text.begin(), text.end(), nullptr, false);
  const std::string where(source);
  if (j.is_discarded() || !j.is_object()) throw ReadError(where + ": not a JSON object");
  const auto options = j.find("options");
  if (options == j.end() || !options->is_array()) throw ReadError(where + ": /options: expected a list of options");
  PlanPlotData out;
  out.name = j.value("plan", std::string());
  for (std::size_t i = 0; i < options->size(); ++i) {
    const nlohmann::json& o = (*options)[i];
    const std::string at = where + ": /options/" + std::to_string(i);
    if (!o.is_object()) throw ReadError(at + ": expected an object");
    const nlohmann::json* time = nullptr;
    if (const auto t = o.find("time_to_train_s"); t != o.end() && t->is_object() && t->contains("p50"))
      time = &t->at("p50");
    const nlohmann::json* owned = nullptr;
    if (const auto w = o.find("owned_cost_usd"); w != o.end() && w->is_object() && w->contains("total"))
      owned = &w->at("total");
    const nlohmann::json* cost = owned ? owned : (o.contains("cost_usd") ? &o.at("cost_usd") : nullptr);
    if (!time || time->is_null() || !cost || cost->is_null()) {
      ++out.without_cost;
      continue;
    }
    if (!time->is_number() || !(time->get<double>() > 0.0))
      throw ReadError(at + "/time_to_train_s/p50: expected a positive number");
    if (!cost->is_number() || !(cost->get<double>() > 0.0))
      throw ReadError(at + (owned ? "/owned_cost_usd/total" : "/cost_usd") + ": expected a positive number");
    PlanPoint p;
    p.cluster = o.value("cluster", std::string());
    p.time_to_train_s = time->get<double>();
    p.cost_usd = cost->get<double>();
    p.owned = owned != nullptr;
    p.pareto = o.value("pareto", false);
    out.points.push_back(std::move(p));
  }
  return out;
}

}  // namespace trainsim::gui
