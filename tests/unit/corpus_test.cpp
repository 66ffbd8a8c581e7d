// The validation corpus reader and report (scenario/corpus_reader.h,
// report/corpus_report.h): errors naming the file, case and field; statistics
// and Spearman's rank correlation on hand-made rows, derived by hand.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <gmock/gmock.h>

#include "report/corpus_report.h"
#include "scenario/corpus_reader.h"
#include "scenario/errors.h"

namespace trainsim {
namespace {

using ::testing::HasSubstr;

std::filesystem::path write(const std::string& name, const std::string& text, const std::string& folder) {
  const auto dir = std::filesystem::temp_directory_path() / (folder + "_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / name) << text;
  return dir / name;
}

const char* kCase = R"({"id": "a-1", "source": {"repo": "x/y", "file": "t.md", "commit": "abc"},
  "measured": {"iteration_time_s": 2.0, "peak_memory_bytes": 1e9},
  "scenario": {"cluster": {"gpu": {"preset": "H100-SXM5-80GB", "name": "g"}, "num_nodes": 1},
               "model": {"name": "m", "num_experts": 8}, "training": {"precision": "fp8"}}})";

// Each test writes in a folder of its own: ctest runs them in parallel.
std::string error_of(const std::string& text) {
  const std::filesystem::path file = write("c.json", text, "trainsim_corpus_errors_test");
  std::string message;
  try {
    (void)scenario::read_corpus(file);
  } catch (const scenario::ScenarioError& e) {
    message = e.what();
  }
  std::filesystem::remove_all(file.parent_path());
  return message;
}

TEST(CorpusReader, ReadsACaseAndDerivesItsTags) {
  const std::filesystem::path file = write("c.json", std::string("[") + kCase + "]", "trainsim_corpus_case_test");
  const scenario::Corpus c = scenario::read_corpus(file);
  std::filesystem::remove_all(file.parent_path());
  ASSERT_EQ(c.cases.size(), 1u);
  EXPECT_EQ(c.cases[0].id, "a-1");
  EXPECT_EQ(c.cases[0].source, "x/y, t.md @abc");
  EXPECT_EQ(c.cases[0].tags, (std::vector<std::string>{"H100", "fp8", "moe", "a"}));
  EXPECT_EQ(c.cases[0].model, "m");
  EXPECT_EQ(c.cases[0].measured_iteration_s, 2.0);
  EXPECT_EQ(c.cases[0].measured_peak_bytes, 1e9);
}

TEST(CorpusReader, ErrorsNameTheFileCaseAndField) {
  EXPECT_THAT(error_of("{}"), HasSubstr("c.json: expected a list of cases"));
  EXPECT_THAT(error_of(R"([{"id": "x", "measured": {}, "scenario": {}}])"), HasSubstr("/0/measured/iteration_time_s"));
  EXPECT_THAT(error_of(R"([{"id": "x", "measured": {"iteration_time_s": 1}}])"), HasSubstr("/0/scenario"));
  EXPECT_THAT(error_of(std::string("[") + kCase + "," + kCase + "]"),
              HasSubstr("case id \"a-1\" is already taken"));
  EXPECT_THAT(error_of(R"([{"id": "x", "measured": {"iteration_time_s": 1}, "scenario": {}, "colour": 1}])"),
              HasSubstr("colour"));
}

TEST(CorpusReader, HeldOutIdsMustBeCases) {
  const auto dir = write("cases.json", std::string("[") + kCase + "]", "trainsim_corpus_held_out_test").parent_path();
  std::ofstream(dir / "held_out.json") << R"({"rule": "r", "held_out": ["nope"]})";
  try {
    (void)scenario::read_corpus(dir);
    FAIL() << "an unknown held-out id was accepted";
  } catch (const scenario::ScenarioError& e) {
    EXPECT_THAT(e.what(), HasSubstr("held_out.json: /held_out/0: expected the id of a case in the corpus"));
  }
  std::ofstream(dir / "held_out.json") << R"({"rule": "r", "held_out": ["a-1"]})";
  const scenario::Corpus c = scenario::read_corpus(dir);
  EXPECT_TRUE(c.held_out.contains("a-1"));
  EXPECT_EQ(c.held_out_rule, "r");
  std::filesystem::remove_all(dir);
}

TEST(CorpusReport, SpearmanByHand) {
  EXPECT_DOUBLE_EQ(report::spearman({1, 2, 3, 4}, {10, 20, 30, 40}), 1.0);
  EXPECT_DOUBLE_EQ(report::spearman({1, 2, 3, 4}, {4, 3, 2, 1}), -1.0);
  // Ranks (1, 2.5, 2.5, 4) against (1, 2, 3, 4): covariance 4.5 over sqrt(4.5 x 5).
  EXPECT_NEAR(report::spearman({1, 2, 2, 3}, {1, 2, 3, 4}), 4.5 / std::sqrt(4.5 * 5.0), 1e-15);
}

report::CorpusRow row(std::string id, double measured, std::optional<double> predicted, bool held_out,
                      std::vector<std::string> tags) {
  report::CorpusRow r;
  r.id = std::move(id);
  r.measured_s = measured;
  r.predicted_s = predicted;
  r.held_out = held_out;
  r.tags = std::move(tags);
  r.model = "m";
  r.gpus = 8;
  r.tokens = 1000;
  if (!predicted) r.refused = "no";
  return r;
}

TEST(CorpusReport, GroupsByHand) {
  // Errors -0.5, +0.25, -0.2 (not held out), -0.4 (held out), one refused.
  const report::CorpusReport r = report::corpus_report(
      {row("a", 2.0, 1.0, false, {"x"}), row("b", 4.0, 5.0, false, {"x", "y"}), row("c", 5.0, 4.0, false, {"y"}),
       row("d", 5.0, 3.0, true, {"x"}), row("e", 1.0, std::nullopt, false, {"y"})},
      "rule");
  EXPECT_EQ(r.fitting.cases, 3);
  EXPECT_EQ(r.fitting.refused, 1);
  EXPECT_NEAR(r.fitting.mean_abs, (0.5 + 0.25 + 0.2) / 3, 1e-15);
  EXPECT_NEAR(r.fitting.mean_signed, (-0.5 + 0.25 - 0.2) / 3, 1e-15);
  EXPECT_NEAR(r.fitting.max_abs, 0.5, 1e-15);
  EXPECT_EQ(r.held_out.cases, 1);
  EXPECT_NEAR(r.held_out.mean_abs, 0.4, 1e-15);
  ASSERT_EQ(r.by_tag.size(), 2u);  // held-out cases are not in the tag groups
  EXPECT_EQ(r.by_tag[0].name, "x");
  EXPECT_EQ(r.by_tag[0].cases, 2);
  EXPECT_NEAR(r.by_tag[0].mean_abs, (0.5 + 0.25) / 2, 1e-15);
  EXPECT_EQ(r.by_tag[1].refused, 1);
  // Throughput per GPU: measured 1/2, 1/4, 1/5 and predicted 1, 1/5, 1/4 (x 125):
  // ranks (3, 2, 1) against (3, 1, 2): rho = 1 - 6 x 2 / (3 x 8) = 0.5.
  ASSERT_EQ(r.correlations.size(), 1u);
  EXPECT_NEAR(r.correlations[0].spearman, 0.5, 1e-15);
}

}  // namespace
}  // namespace trainsim
