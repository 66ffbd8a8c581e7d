#pragma once
// The validation corpus report (`trainsim validate --corpus`, docs/validation.md
// "The public corpus"): every published run simulated as `trainsim run` would,
// its predicted step time and peak memory against the measured ones, and the
// errors by group (each tag: GPU, precision, dense or MoE, source), with the
// held-out cases apart, and Spearman's rank correlation of throughput within
// each model.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "scenario/corpus_reader.h"

namespace trainsim::report {

struct CorpusRow {
  std::string id;
  std::vector<std::string> tags;
  std::string model;
  bool held_out = false;
  long long gpus = 0;
  double tokens = 0.0;  // per iteration
  double measured_s = 0.0;
  std::optional<double> predicted_s;  // none: refused (then `refused` says why)
  // The prediction interval's P10 and P90 (report/prediction_interval.h); none
  // without one.
  std::optional<double> predicted_p10_s;
  std::optional<double> predicted_p90_s;
  std::string refused;
  bool fits = true;
  std::optional<double> measured_peak_bytes;
  std::optional<double> predicted_peak_bytes;
  std::string memory_kind;
  // predicted / measured - 1: negative is too fast (too little memory).
  [[nodiscard]] std::optional<double> error() const;
  [[nodiscard]] std::optional<double> memory_error() const;
  // Whether the measured time lies in [P10, P90]; none without an interval.
  [[nodiscard]] std::optional<bool> in_band() const;
};

struct GroupStats {
  std::string name;
  int cases = 0;        // predicted
  int refused = 0;
  double mean_abs = 0.0;     // of the step time error
  double mean_signed = 0.0;
  double max_abs = 0.0;
  int memory_cases = 0;
  double memory_mean_abs = 0.0;
  int band_cases = 0;       // predicted with an interval
  double band_share = 0.0;  // of those, measured inside [P10, P90]
};

struct ModelCorrelation {
  std::string model;
  int cases = 0;
  double spearman = 0.0;  // predicted against measured throughput, ranks with ties averaged
};

struct CorpusReport {
  std::vector<CorpusRow> rows;
  std::string held_out_rule;
  GroupStats fitting;   // every case not held out
  GroupStats held_out;  // the held-out cases
  std::vector<GroupStats> by_tag;  // over the cases not held out, by tag name
  std::vector<ModelCorrelation> correlations;  // models with 3 or more predicted cases not held out
};

// Simulates every case `select` keeps (all without one) on `threads` threads; the
// rows come back in corpus order whatever the thread count. A case whose
// scenario trainsim refuses, or cannot simulate, is a row with the reason.
std::vector<CorpusRow> evaluate_corpus(const scenario::Corpus& corpus, int threads,
                                       const std::function<bool(const scenario::CorpusCase&)>& select = {});
CorpusReport corpus_report(std::vector<CorpusRow> rows, const std::string& held_out_rule);
// Spearman's rank correlation of two equally long lists (ties take their mean rank).
double spearman(const std::vector<double>& a, const std::vector<double>& b);

std::string corpus_text(const CorpusReport& r);
nlohmann::ordered_json corpus_json(const CorpusReport& r);
// The figures a regression check compares against (tests/validation/corpus/
// figures.json): every group's statistics, without the cases.
nlohmann::ordered_json corpus_figures_json(const CorpusReport& r);

}  // namespace trainsim::report
