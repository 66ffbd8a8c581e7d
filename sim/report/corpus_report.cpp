#include "report/corpus_report.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <map>
#include <numeric>

#include "core/parallel.h"
#include "execution/simulate.h"
#include "report/metrics.h"
#include "report/result_keys.h"
#include "scenario/reader.h"

namespace trainsim::report {

namespace {

CorpusRow evaluate_case(const scenario::CorpusCase& c, bool held_out) {
  CorpusRow row;
  row.id = c.id;
  row.tags = c.tags;
  row.model = c.model;
  row.held_out = held_out;
  row.measured_s = c.measured_iteration_s;
  row.measured_peak_bytes = c.measured_peak_bytes;
  row.memory_kind = c.memory_kind;
  try {
    const config::Scenario s = scenario::parse_scenario_text(c.scenario.dump(), c.file + " (case " + c.id + ")");
    row.gpus = s.cluster.num_gpus();
    exec::SimulateOptions options;
    options.memory_timeline = false;  // the report compares the peak estimate (the result's peak_bytes_per_gpu)
    options.link_counters = false;
    const exec::SimulationOutput out = exec::simulate(s, options);
    const Metrics m = compute_metrics(s, out);
    row.tokens = m.tokens_per_iteration;
    row.predicted_s = m.iteration_time_s;
    if (m.prediction_interval) {
      row.predicted_p10_s = m.prediction_interval->p10;
      row.predicted_p90_s = m.prediction_interval->p90;
    }
    row.predicted_peak_bytes = m.memory.peak_bytes_per_gpu;
    row.fits = m.memory.fits;
  } catch (const std::exception& e) {
    // A recipe trainsim cannot express yet (or a layout it cannot build): the
    // report lists it with the reason and goes on.
    row.refused = e.what();
  }
  return row;
}

GroupStats stats(std::string name, const std::vector<const CorpusRow*>& rows) {
  GroupStats g;
  g.name = std::move(name);
  double abs_sum = 0.0, signed_sum = 0.0, memory_sum = 0.0;
  int in_band = 0;
  for (const CorpusRow* r : rows) {
    const std::optional<double> e = r->error();
    if (!e) {
      ++g.refused;
      continue;
    }
    ++g.cases;
    abs_sum += std::abs(*e);
    signed_sum += *e;
    g.max_abs = std::max(g.max_abs, std::abs(*e));
    if (const std::optional<double> me = r->memory_error()) {
      ++g.memory_cases;
      memory_sum += std::abs(*me);
    }
    if (const std::optional<bool> inside = r->in_band()) {
      ++g.band_cases;
      if (*inside) ++in_band;
    }
  }
  if (g.band_cases > 0) g.band_share = static_cast<double>(in_band) / g.band_cases;
  if (g.cases > 0) {
    g.mean_abs = abs_sum / g.cases;
    g.mean_signed = signed_sum / g.cases;
  }
  if (g.memory_cases > 0) g.memory_mean_abs = memory_sum / g.memory_cases;
  return g;
}

std::vector<double> ranks(const std::vector<double>& v) {
  std::vector<std::size_t> order(v.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return v[a] < v[b]; });
  std::vector<double> r(v.size());
  for (std::size_t i = 0; i < order.size();) {
    std::size_t j = i;
    while (j + 1 < order.size() && v[order[j + 1]] == v[order[i]]) ++j;
    const double mean_rank = 0.5 * static_cast<double>(i + j) + 1.0;
    for (std::size_t k = i; k <= j; ++k) r[order[k]] = mean_rank;
    i = j + 1;
  }
  return r;
}

std::string percent(double x) { return fmt::format("{:+.1f}%", 100.0 * x); }

std::string stats_line(const GroupStats& g) {
  std::string out = fmt::format("{:<28} {:>4} {:>8.1f}% {:>+8.1f}% {:>8.1f}%", g.name, g.cases, 100.0 * g.mean_abs,
                                100.0 * g.mean_signed, 100.0 * g.max_abs);
  out += g.memory_cases > 0 ? fmt::format(" {:>7} {:>8.1f}%", g.memory_cases, 100.0 * g.memory_mean_abs)
                            : fmt::format(" {:>7} {:>9}", 0, "-");
  out += g.band_cases > 0 ? fmt::format(" {:>7.0f}%", 100.0 * g.band_share) : fmt::format(" {:>8}", "-");
  if (g.refused > 0) out += fmt::format("  ({} refused)", g.refused);
  return out + "\n";
}

nlohmann::ordered_json stats_json(const GroupStats& g) {
  return {{"name", g.name},
          {"cases", g.cases},
          {"refused", g.refused},
          {"mean_abs_error", g.mean_abs},
          {"mean_signed_error", g.mean_signed},
          {"max_abs_error", g.max_abs},
          {"memory_cases", g.memory_cases},
          {"memory_mean_abs_error", g.memory_mean_abs},
          {"band_cases", g.band_cases},
          {"in_band_share", g.band_share}};
}

}  // namespace

std::optional<double> CorpusRow::error() const {
  if (!predicted_s) return std::nullopt;
  return *predicted_s / measured_s - 1.0;
}

std::optional<bool> CorpusRow::in_band() const {
  if (!predicted_p10_s || !predicted_p90_s) return std::nullopt;
  return measured_s >= *predicted_p10_s && measured_s <= *predicted_p90_s;
}

std::optional<double> CorpusRow::memory_error() const {
  if (!predicted_peak_bytes || !measured_peak_bytes) return std::nullopt;
  return *predicted_peak_bytes / *measured_peak_bytes - 1.0;
}

std::vector<CorpusRow> evaluate_corpus(const scenario::Corpus& corpus, int threads,
                                       const std::function<bool(const scenario::CorpusCase&)>& select) {
  std::vector<const scenario::CorpusCase*> chosen;
  for (const scenario::CorpusCase& c : corpus.cases)
    if (!select || select(c)) chosen.push_back(&c);
  std::vector<CorpusRow> rows(chosen.size());
  core::parallel_for(chosen.size(), core::threads_or_every_core(threads), [&](std::size_t i) {
    rows[i] = evaluate_case(*chosen[i], corpus.held_out.contains(chosen[i]->id));
  });
  return rows;
}

double spearman(const std::vector<double>& a, const std::vector<double>& b) {
  const std::vector<double> ra = ranks(a);
  const std::vector<double> rb = ranks(b);
  const double n = static_cast<double>(ra.size());
  const double mean = (n + 1.0) / 2.0;
  double cov = 0.0, va = 0.0, vb = 0.0;
  for (std::size_t i = 0; i < ra.size(); ++i) {
    cov += (ra[i] - mean) * (rb[i] - mean);
    va += (ra[i] - mean) * (ra[i] - mean);
    vb += (rb[i] - mean) * (rb[i] - mean);
  }
  return va > 0.0 && vb > 0.0 ? cov / std::sqrt(va * vb) : 0.0;
}

CorpusReport corpus_report(std::vector<CorpusRow> rows, const std::string& held_out_rule) {
  CorpusReport r;
  r.rows = std::move(rows);
  r.held_out_rule = held_out_rule;
  std::vector<const CorpusRow*> fitting, held_out;
  std::map<std::string, std::vector<const CorpusRow*>> by_tag;
  std::map<std::string, std::vector<const CorpusRow*>> by_model;
  for (const CorpusRow& row : r.rows) {
    (row.held_out ? held_out : fitting).push_back(&row);
    if (row.held_out) continue;
    for (const std::string& t : row.tags) by_tag[t].push_back(&row);
    if (row.predicted_s && !row.model.empty()) by_model[row.model].push_back(&row);
  }
  r.fitting = stats("not held out", fitting);
  r.held_out = stats("held out", held_out);
  for (const auto& [tag, list] : by_tag) r.by_tag.push_back(stats(tag, list));
  for (const auto& [model, list] : by_model) {
    if (list.size() < 3) continue;
    // Throughput per GPU: tokens per iteration / (iteration time x GPUs).
    std::vector<double> predicted, measured;
    for (const CorpusRow* row : list) {
      const double per_gpu = row->tokens / static_cast<double>(std::max<long long>(row->gpus, 1));
      predicted.push_back(per_gpu / *row->predicted_s);
      measured.push_back(per_gpu / row->measured_s);
    }
    r.correlations.push_back({model, static_cast<int>(list.size()), spearman(predicted, measured)});
  }
  return r;
}

std::string corpus_text(const CorpusReport& r) {
  std::string out = fmt::format("{:<58} {:>6} {:>10} {:>10} {:>8} {:>8}\n", "case", "GPUs", "measured", "predicted",
                                "error", "memory");
  for (const CorpusRow& row : r.rows) {
    const std::string id = row.held_out ? row.id + " (held out)" : row.id;
    if (!row.predicted_s) {
      out += fmt::format("{:<58} {:>6} {:>9.3f}s {:>10} {:>8} {:>8}\n", id, row.gpus ? std::to_string(row.gpus) : "-",
                         row.measured_s, "refused", "-", "-");
      continue;
    }
    const std::optional<double> me = row.memory_error();
    out += fmt::format("{:<58} {:>6} {:>9.3f}s {:>9.3f}s {:>8} {:>8}{}\n", id, row.gpus, row.measured_s,
                       *row.predicted_s, percent(*row.error()), me ? percent(*me) : "-",
                       row.fits ? "" : "  (does not fit)");
  }
  out += fmt::format("\nerrors: predicted / measured - 1 (negative: too fast); in band: measured inside the "
                     "prediction interval's P10-P90\n{:<28} {:>4} {:>9} {:>9} {:>9} {:>7} {:>9} {:>8}\n",
                     "group", "n", "mean |e|", "mean e", "max |e|", "memory", "mean |e|", "in band");
  out += stats_line(r.fitting);
  for (const GroupStats& g : r.by_tag) out += stats_line(g);
  out += "\n" + stats_line(r.held_out);
  if (!r.held_out_rule.empty()) out += "  held out: " + r.held_out_rule + "\n";
  if (!r.correlations.empty()) {
    out += "\nSpearman rank correlation of throughput per GPU within a model (cases not held out):\n";
    for (const ModelCorrelation& c : r.correlations)
      out += fmt::format("  {:<40} n={:<3} {:+.2f}\n", c.model, c.cases, c.spearman);
  }
  bool header = false;
  for (const CorpusRow& row : r.rows) {
    if (row.predicted_s) continue;
    if (!header) out += "\nrefused:\n";
    header = true;
    out += fmt::format("  {}: {}\n", row.id, row.refused);
  }
  return out;
}

nlohmann::ordered_json corpus_figures_json(const CorpusReport& r) {
  nlohmann::ordered_json j;
  j["format"] = "trainsim-corpus-figures";
  j["version"] = 1;
  j["recorded_with"] = "trainsim validate --corpus tests/validation/corpus --record tests/validation/corpus/figures.json";
  nlohmann::ordered_json groups = nlohmann::ordered_json::array();
  groups.push_back(stats_json(r.fitting));
  groups.push_back(stats_json(r.held_out));
  for (const GroupStats& g : r.by_tag) groups.push_back(stats_json(g));
  j["groups"] = std::move(groups);
  return j;
}

nlohmann::ordered_json corpus_json(const CorpusReport& r) {
  nlohmann::ordered_json j;
  j["format"] = "trainsim-corpus-report";
  j["version"] = 1;
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (const CorpusRow& row : r.rows) {
    nlohmann::ordered_json x;
    x["id"] = row.id;
    x["tags"] = row.tags;
    x["model"] = row.model;
    x["held_out"] = row.held_out;
    x["gpus"] = row.gpus;
    x["measured_iteration_time_s"] = row.measured_s;
    x["predicted_iteration_time_s"] = optional_number(row.predicted_s);
    x["predicted_p10_s"] = optional_number(row.predicted_p10_s);
    x["predicted_p90_s"] = optional_number(row.predicted_p90_s);
    x["error"] = optional_number(row.error());
    x["measured_peak_bytes"] = optional_number(row.measured_peak_bytes);
    x["predicted_peak_bytes"] = optional_number(row.predicted_peak_bytes);
    x["memory_error"] = optional_number(row.memory_error());
    x["memory_kind"] = row.memory_kind;
    x["fits"] = row.fits;
    x["refused"] = row.refused.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(row.refused);
    rows.push_back(std::move(x));
  }
  j["cases"] = std::move(rows);
  j["not_held_out"] = stats_json(r.fitting);
  j["held_out"] = stats_json(r.held_out);
  j["held_out_rule"] = r.held_out_rule;
  nlohmann::ordered_json tags = nlohmann::ordered_json::array();
  for (const GroupStats& g : r.by_tag) tags.push_back(stats_json(g));
  j["by_tag"] = std::move(tags);
  nlohmann::ordered_json corr = nlohmann::ordered_json::array();
  for (const ModelCorrelation& c : r.correlations)
    corr.push_back({{"model", c.model}, {"cases", c.cases}, {"spearman", c.spearman}});
  j["spearman_by_model"] = std::move(corr);
  return j;
}

}  // namespace trainsim::report
