#pragma once
// The validation corpus (tests/validation/corpus/, docs/validation.md "The
// public corpus"): published training runs, each with its source, the measured
// step time (and peak memory where published) and the trainsim scenario of its
// recipe. A corpus file is a JSON list of cases; a corpus folder is every
// *.json list in it, plus held_out.json (the cases kept out of model fitting);
// figures.json there is the recorded report (report/corpus_report.h), not cases.
#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace trainsim::scenario {

struct CorpusCase {
  std::string id;
  std::string file;    // the corpus file it is in
  std::string source;  // repository, file, commit, table and row, as one line
  // What the case is, for grouping: the GPU, the precision, "dense" or "moe", the
  // source; a file's own tags where it gives them ("long-seq", "formula-derived").
  std::vector<std::string> tags;
  std::string model;  // the model's name: Spearman's rank correlation is taken within a model
  double measured_iteration_s = 0.0;
  std::optional<double> measured_peak_bytes;
  std::string memory_kind;  // what the peak is ("max_reserved", "max_allocated"), as published
  // The scenario, read case by case by the caller so that one it refuses does
  // not stop the rest.
  nlohmann::json scenario;
};

struct Corpus {
  std::vector<CorpusCase> cases;     // in file order, the files by name
  std::set<std::string> held_out;    // ids (held_out.json); empty: none held out
  std::string held_out_rule;         // how they were chosen
};

// Reads a corpus file or folder. Throws ScenarioError naming the file, the case
// and the field when a case lacks an id, a measured iteration time or a
// scenario, when two cases share an id, or when held_out.json names an unknown one.
Corpus read_corpus(const std::filesystem::path& path);

}  // namespace trainsim::scenario
