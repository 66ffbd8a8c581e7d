// `trainsim run`'s micro-batch extrapolation (report/microbatch_extrapolation.h):
// where it applies, the result file and the summary are byte for byte those of
// the full simulation; where the short runs would not save work, or their
// totals are not on a line, it declines and the caller simulates in full.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "execution/simulate.h"
#include "report/metrics.h"
#include "report/microbatch_extrapolation.h"
#include "report/result_json.h"
#include "report/summary.h"
#include "scenario/reader.h"

namespace trainsim::report {
namespace {

// A 4-layer model on one 8-GPU A100 node: tp x pp GPUs a replica, micro-batches
// of one sequence, the given global batch and network model.
// `slowdown`: keep the preset's slowdown of compute beside communication.
config::Scenario tiny(int tp, int pp, long long global_batch, const std::string& network_model,
                      bool slowdown = false) {
  const std::string text = R"({"name": "tiny",
     "cluster": {"gpu": "A100-SXM4-80GB", "num_nodes": 1, "price_per_gpu_hour": 2.0},
     "model": {"num_layers": 4, "hidden_size": 256, "ffn_hidden_size": 1024, "num_attention_heads": 4,
               "num_query_groups": 4, "seq_length": 128, "vocab_size": 1000},
     "training": {"global_batch_size": )" + std::to_string(global_batch) +
                           R"(, "micro_batch_size": 1, "train_tokens": 1e9},
     "parallelism": {"tp": )" + std::to_string(tp) +
                           R"(, "pp": )" + std::to_string(pp) + R"(, "dp": "auto", "overlap_grad_reduce": true},
     "simulation": {"network_model": ")" + network_model + R"("}})";
  config::Scenario s = scenario::parse_scenario_text(text, "tiny.json");
  if (!slowdown) s.cluster.gpu.overlap_compute_slowdown = s.cluster.gpu.overlap_memory_slowdown = 0.0;
  return s;
}

// The extrapolated result against the full simulation's, as the files and the
// summary show them; the result.
Metrics expect_byte_identical(const config::Scenario& s) {
  const std::optional<Metrics> x = extrapolated_metrics(s, {});
  EXPECT_TRUE(x.has_value());
  if (!x) return {};
  const exec::SimulationOutput out = exec::simulate(s);
  const Metrics full = compute_metrics(s, out);
  EXPECT_EQ(result_json(s, *x, "t.json", "").dump(1), result_json(s, full, "t.json", "").dump(1));
  EXPECT_EQ(summary_text(s, *x), summary_text(s, full));
  // A memory timeline to agree on.
  EXPECT_GT(x->memory.timeline_peak_bytes, 0.0);
  return *x;
}

TEST(RunExtrapolation, OneFOneBOnFourStagesIsTheFullResultByteForByte) {
  // 2 replicas of 4 stages, 64 micro-batches each: short runs of 4, 8 and 12.
  const config::Scenario s = tiny(1, 4, 128, "flow");
  EXPECT_EQ(extrapolation_counts(s), (std::array<long long, 3>{4, 8, 12}));
  // With traffic on the links (the flow model's bytes per link) to agree on.
  EXPECT_GT(expect_byte_identical(s).network.links_used, 0u);
}

TEST(RunExtrapolation, TensorAndDataParallelIsTheFullResultByteForByte) {
  // tp 2, no pipeline, 4 replicas of 32 micro-batches: short runs of 2, 3 and 4.
  EXPECT_GT(expect_byte_identical(tiny(2, 1, 128, "flow")).network.links_used, 0u);
  expect_byte_identical(tiny(2, 1, 128, "analytic"));
}

TEST(RunExtrapolation, DeclinesWhereTheShortRunsWouldNotSaveHalfTheWork) {
  // 4 stages, 16 micro-batches per replica (32 / 2): fewer than 2 x 12, no counts.
  EXPECT_EQ(extrapolation_counts(tiny(1, 4, 32, "flow")), std::nullopt);
  EXPECT_FALSE(extrapolated_metrics(tiny(1, 4, 32, "flow"), {}).has_value());
  // 24 micro-batches (48 / 2): counts 4, 8, 12, but 2 x (4 + 8 + 12) = 48 > 24.
  EXPECT_EQ(extrapolation_counts(tiny(1, 4, 48, "flow")), (std::array<long long, 3>{4, 8, 12}));
  EXPECT_FALSE(extrapolated_metrics(tiny(1, 4, 48, "flow"), {}).has_value());
}

TEST(RunExtrapolation, DeclinesWhenTheTotalsAreNotOnALine) {
  // With the A100 preset's slowdown of compute beside communication the sends
  // shift the 1F1B steady state by a few nanoseconds more each micro-batch
  // (tests/unit/sweep_extrapolation_test.cpp): simulated in full.
  const config::Scenario s = tiny(1, 4, 128, "flow", true);
  ASSERT_GT(s.cluster.gpu.overlap_compute_slowdown, 0.0);
  EXPECT_FALSE(extrapolated_metrics(s, {}).has_value());
}

TEST(RunExtrapolation, ProgressSeesTheShortRunsAsOneRun) {
  std::vector<double> seen;
  exec::SimulateOptions options;
  options.progress = [&](double f) { seen.push_back(f); };
  ASSERT_TRUE(extrapolated_metrics(tiny(1, 4, 128, "flow"), options).has_value());
  ASSERT_FALSE(seen.empty());
  for (std::size_t i = 1; i < seen.size(); ++i) EXPECT_LE(seen[i - 1], seen[i]) << i;
  EXPECT_GE(seen.front(), 0.0);
  EXPECT_EQ(seen.back(), 1.0);
}

}  // namespace
}  // namespace trainsim::report
