// The public validation corpus (tests/validation/corpus/, docs/validation.md "The
// public corpus"): every case simulated, and each group's errors against the
// figures recorded in figures.json. A change that makes a group's mean absolute
// step-time error worse by more than half a percentage point, refuses a case
// that ran, or loses a case fails here; one that improves a group says so, so
// the figures can be recorded again (the command is in figures.json).
#include <gtest/gtest.h>

#include <fmt/format.h>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "report/corpus_report.h"
#include "report/prediction_interval.h"
#include "scenario/corpus_reader.h"
#include "scenario/model_error_reader.h"

namespace trainsim {
namespace {

constexpr double kTolerance = 0.005;  // of mean |error|, absolute: half a percentage point

const std::string kCorpus = std::string(TRAINSIM_SOURCE_DIR) + "/tests/validation/corpus";

nlohmann::json recorded_figures() {
  std::ifstream in(kCorpus + "/figures.json");
  std::stringstream text;
  text << in.rdbuf();
  return nlohmann::json::parse(text.str());
}

TEST(PublicCorpus, NoGroupRegressesFromTheRecordedFigures) {
  const scenario::Corpus corpus = scenario::read_corpus(kCorpus);
  // 136, then torchtitan's four Async TP rows (2026-11-28), four NVFP4 rows (2026-11-29) and
  // Hagemann et al.'s 136 A100 layouts, 45 of them held out (2026-11-30)
  ASSERT_EQ(corpus.cases.size(), 280u);
  ASSERT_EQ(corpus.held_out.size(), 90u);
  const report::CorpusReport r = report::corpus_report(report::evaluate_corpus(corpus, 0), corpus.held_out_rule);
  // The prediction interval's record (scenarios/accuracy/model_error.json) is this corpus's
  // record under the current model: a modeling change records it again.
  const config::ModelErrorRecord shipped = scenario::shipped_model_error();
  const config::ModelErrorRecord now_error = report::model_error_record(r);
  EXPECT_EQ(shipped.cases, now_error.cases) << "record again: " << shipped.recorded_with;
  EXPECT_DOUBLE_EQ(shipped.ratio_p10, now_error.ratio_p10) << "record again: " << shipped.recorded_with;
  EXPECT_DOUBLE_EQ(shipped.ratio_p50, now_error.ratio_p50) << "record again: " << shipped.recorded_with;
  EXPECT_DOUBLE_EQ(shipped.ratio_p90, now_error.ratio_p90) << "record again: " << shipped.recorded_with;
  const nlohmann::json now = report::corpus_figures_json(r);
  std::map<std::string, nlohmann::json> current;
  for (const nlohmann::json& g : now["groups"]) current[g["name"].get<std::string>()] = g;
  const nlohmann::json recorded = recorded_figures();
  ASSERT_FALSE(recorded["groups"].empty());
  for (const nlohmann::json& was : recorded["groups"]) {
    const std::string name = was["name"].get<std::string>();
    ASSERT_TRUE(current.contains(name)) << "group " << name << " has no cases any more";
    const nlohmann::json& is = current[name];
    const double before = was["mean_abs_error"].get<double>();
    const double after = is["mean_abs_error"].get<double>();
    std::cout << fmt::format("{:<28} n={:<3} mean |e| {:6.1f}% (recorded {:6.1f}%)  mean e {:+6.1f}%\n", name,
                             is["cases"].get<int>(), 100.0 * after, 100.0 * before,
                             100.0 * is["mean_signed_error"].get<double>());
    EXPECT_LE(after, before + kTolerance) << name << ": mean |error| grew";
    EXPECT_LE(is["refused"].get<int>(), was["refused"].get<int>()) << name << ": more cases refused";
    EXPECT_GE(is["cases"].get<int>(), was["cases"].get<int>()) << name << ": fewer cases predicted";
    if (after < before - kTolerance)
      std::cout << fmt::format("  {} improved: record the figures again ({})\n", name,
                               recorded["recorded_with"].get<std::string>());
  }
}

}  // namespace
}  // namespace trainsim
