#include "model/corpus_points.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "model/timeline_reader.h"

namespace trainsim::gui {

namespace {

// "fp8 dense", "bf16 moe", ...: what sets a case's speed most, for its colour.
std::string family_of(const nlohmann::json& tags) {
  std::string precision = "bf16";
  std::string kind = "dense";
  if (tags.is_array())
    for (const nlohmann::json& t : tags) {
      if (!t.is_string()) continue;
      const std::string s = t.get<std::string>();
      if (s == "fp8" || s == "bf16" || s == "fp16" || s == "fp4") precision = s;
      if (s == "moe") kind = "moe";
    }
  return precision + " " + kind;
}

}  // namespace

bool is_corpus_report(std::string_view text) { return text.find("\"trainsim-corpus-report\"") != std::string_view::npos; }

CorpusPlotData parse_corpus_report_text(std::string_view text, std::string_view source) {
  const nlohmann::json j = nlohmann::json::parse(text.begin(), text.end(), nullptr, false);
  const std::string where(source);
  if (j.is_discarded() || !j.is_object()) throw ReadError(where + ": not a JSON object");
  const auto cases = j.find("cases");
  if (cases == j.end() || !cases->is_array()) throw ReadError(where + ": /cases: expected a list of cases");
  CorpusPlotData out;
  for (std::size_t i = 0; i < cases->size(); ++i) {
    const nlohmann::json& c = (*cases)[i];
    const auto measured = c.find("measured_iteration_time_s");
    const auto predicted = c.find("predicted_iteration_time_s");
    if (measured == c.end() || !measured->is_number() || !(measured->get<double>() > 0.0))
      throw ReadError(where + ": /cases/" + std::to_string(i) + "/measured_iteration_time_s: expected a positive number");
    if (predicted == c.end() || predicted->is_null()) {
      ++out.refused;
      continue;
    }
    if (!predicted->is_number() || !(predicted->get<double>() > 0.0))
      throw ReadError(where + ": /cases/" + std::to_string(i) + "/predicted_iteration_time_s: expected a positive number");
    CorpusPoint p;
    p.id = c.value("id", std::string());
    p.measured_s = measured->get<double>();
    p.predicted_s = predicted->get<double>();
    p.family = family_of(c.value("tags", nlohmann::json::array()));
    p.held_out = c.value("held_out", false);
    out.points.push_back(std::move(p));
  }
  return out;
}

}  // namespace trainsim::gui
