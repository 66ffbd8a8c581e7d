// Failures in sweeps (sweep/reliability.h, docs/sweep.md "Failures"): which
// points are replayed, the failure-free closed form of a replayed point, p90 >=
// p50, the ranking by p50, and results independent of the thread count.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/time.h"
#include "scenario/errors.h"
#include "scenario/sweep_spec_reader.h"
#include "sweep/evaluate.h"
#include "sweep/outcome.h"
#include "sweep/ranking.h"
#include "sweep/reliability.h"
#include "sweep/space.h"
#include "workload/parameters.h"

namespace trainsim::sweep {
namespace {

using config::SweepSpec;
using scenario::parse_sweep_spec;

// A 4-layer model with 4 heads; global batch 8 of 128 tokens; 1M tokens is 977
// iterations. Cluster options: one and two 8-GPU A100 nodes.
std::string spec_text(const std::string& failures, const std::string& extra = "") {
  return R"({"name": "tiny", "model": {"num_layers": 4, "hidden_size": 256, "ffn_hidden_size": 1024,
             "num_attention_heads": 4, "num_query_groups": 4, "seq_length": 128, "vocab_size": 1000},
     "training": {"global_batch_size": 8, "train_tokens": 1e6},
     "clusters": [{"name": "one node", "gpu": "A100-SXM4-80GB", "num_nodes": [1, 2], "price_per_gpu_hour": 2.0}],
     "space": {"tp": [1, 2, 4], "pp": [1, 2], "mbs": [1, 2]},
     "failures": )" +
         failures + extra + "}";
}

struct Swept {
  SweepSpec spec;
  Outcome outcome;
};

Swept run(const std::string& text, int threads) {
  SweepSpec spec = parse_sweep_spec(text, "tiny.json");
  Enumeration e = enumerate(spec);
  std::vector<PointResult> r = evaluate_points(spec, e.candidates, threads);
  const std::vector<std::size_t> selection = replay_selection(spec, e.candidates, r);
  replay_points(spec, e.candidates, r, selection, threads);
  Outcome o = summarize(spec, std::move(e), std::move(r));
  return {std::move(spec), std::move(o)};
}

TEST(SweepFailures, TheBestKOfEachClusterByFailureFreeTimeAreReplayed) {
  const Swept x = run(spec_text(R"({"failures_per_1000_node_days": 0, "trials": 2})", R"(, "replay_top_k": 2)"), 2);
  ASSERT_GT(x.outcome.evaluated, 4u);
  std::vector<int> per_cluster(x.spec.clusters.size(), 0);
  for (std::size_t i = 0; i < x.outcome.results.size(); ++i)
    if (x.outcome.results[i].reliability) ++per_cluster[static_cast<std::size_t>(x.outcome.points[i].cluster)];
  EXPECT_EQ(per_cluster, (std::vector<int>{2, 2}));
  // Each replayed point is at least as fast, failure-free, as every point of its
  // cluster that was not replayed.
  for (std::size_t i = 0; i < x.outcome.results.size(); ++i) {
    const PointResult& a = x.outcome.results[i];
    if (!a.reliability) continue;
    for (std::size_t j = 0; j < x.outcome.results.size(); ++j) {
      const PointResult& b = x.outcome.results[j];
      if (b.status != Status::kEvaluated || b.reliability || x.outcome.points[j].cluster != x.outcome.points[i].cluster)
        continue;
      EXPECT_LE(*a.time_to_train_s, *b.time_to_train_s);
    }
  }
}

TEST(SweepFailures, NegligibleFailuresGiveTheFailureFreeTimePlusCheckpoints) {
  // A node MTBF of 1e11 s (3,000 years): no trial sees a failure. Checkpoints every 0.1 s of
  // training at 1 GB/s; docs/reliability.md: wall = iterations x iteration time
  // + checkpoints x size / bandwidth, with a checkpoint after every
  // ceil(0.1 s / iteration time) iterations except at the end.
  const Swept x = run(spec_text(R"({"node_mtbf": "1e11s", "checkpoint_interval": "0.1s",
                                  "checkpoint_write_bandwidth": "1GB/s", "trials": 5, "seed": 7})"),
                    1);
  const double parameters = workload::count_parameters(x.spec.clusters[0].base.model).total;
  // 4 x (4 h^2 + 2 h ffn) + vocab h + seq h, plus biases and norms: about 3.45M.
  EXPECT_NEAR(parameters, 3.45e6, 0.05e6);
  const double write_s = parameters * 14.0 / 1e9;  // bf16 weights + fp32 master and Adam moments
  int replayed = 0;
  for (std::size_t i = 0; i < x.outcome.results.size(); ++i) {
    const PointResult& r = x.outcome.results[i];
    if (!r.reliability) continue;
    ++replayed;
    const core::Time it = core::from_seconds(r.iteration_time_s);
    const long long iterations = (1'000'000 + 1023) / 1024;  // 977
    const long long every = (core::from_seconds(0.1) + it - 1) / it;
    const long long checkpoints = (iterations - 1) / every;
    EXPECT_GT(checkpoints, 0);
    EXPECT_EQ(r.reliability->expected_interruptions, 0.0);
    // The replay counts whole nanoseconds per iteration: 977 ns of rounding at most.
    EXPECT_NEAR(r.reliability->time_to_train_p50_s, *r.time_to_train_s + static_cast<double>(checkpoints) * write_s,
                2e-6);
    EXPECT_EQ(r.reliability->time_to_train_p90_s, r.reliability->time_to_train_p50_s);
    // Cost: 8 or 16 GPUs at $2 per GPU-hour over the p50 wall time.
    const auto gpus =
        static_cast<double>(x.spec.clusters[static_cast<std::size_t>(x.outcome.points[i].cluster)].base.cluster.num_gpus());
    EXPECT_NEAR(*r.reliability->cost_p50_usd, r.reliability->time_to_train_p50_s / 3600.0 * gpus * 2.0, 1e-9);
    EXPECT_NEAR(r.reliability->goodput, *r.time_to_train_s / r.reliability->time_to_train_mean_s, 1e-6);
  }
  EXPECT_EQ(replayed, 2 * SweepSpec::kDefaultReplayTopK);
}

TEST(SweepFailures, PlanRanksByP50AndP90IsAtLeastP50) {
  // Nodes fail every second on average; a training of about 0.1 s is
  // interrupted in some trials (each interruption costs at least 0.2 s).
  const std::string text = spec_text(R"({"node_mtbf": "1s", "checkpoint_interval": "0.05s",
      "detection_time": "0.1s", "restart_overhead": "0.1s", "trials": 40, "seed": 3})");
  const Swept x = run(text, 2);
  const nlohmann::ordered_json plan = plan_json(x.spec, x.outcome);
  EXPECT_EQ(plan["failures_modeled"], true);
  for (const auto& e : plan["options"]) {
    ASSERT_FALSE(e["best"].is_null());
    const double p50 = e["time_to_train_s"]["p50"];
    const double p90 = e["time_to_train_s"]["p90"];
    EXPECT_GE(p90, p50);
    EXPECT_GT(p50, e["reliability"]["failure_free_time_to_train_s"].get<double>());
    EXPECT_LT(e["reliability"]["goodput"].get<double>(), 1.0);
    EXPECT_GT(e["reliability"]["expected_interruptions"].get<double>(), 0.0);
    EXPECT_GT(e["reliability"]["time_to_train_mean_s"].get<double>(), p50);  // the interrupted trials' tail
  }
  // The ranking: replayed points first, by p50 time-to-train.
  const auto& rk = x.outcome.ranking;
  std::size_t k = 0;
  for (; k < rk.size() && x.outcome.results[rk[k]].reliability; ++k) {
    if (k > 0) {
      EXPECT_LE(x.outcome.results[rk[k - 1]].reliability->time_to_train_p50_s,
                x.outcome.results[rk[k]].reliability->time_to_train_p50_s);
    }
  }
  EXPECT_EQ(k, 2u * SweepSpec::kDefaultReplayTopK);
  for (; k < rk.size(); ++k) EXPECT_FALSE(x.outcome.results[rk[k]].reliability.has_value());
}

TEST(SweepFailures, SameSeedSameFilesOnOneOrThreeThreads) {
  const std::string text = spec_text(R"({"node_mtbf": "2s", "checkpoint_interval": "0.05s",
      "detection_time": "0.1s", "restart_overhead": "0.1s", "trials": 20, "seed": 11})");
  const Swept one = run(text, 1);
  const Swept three = run(text, 3);
  EXPECT_EQ(points_csv(one.spec, one.outcome), points_csv(three.spec, three.outcome));
  EXPECT_EQ(sweep_json(one.spec, one.outcome).dump(), sweep_json(three.spec, three.outcome).dump());
  EXPECT_EQ(plan_table(one.spec, one.outcome), plan_table(three.spec, three.outcome));
  EXPECT_NE(points_csv(one.spec, one.outcome).find(",time_to_train_p50_s,"), std::string::npos);
}

TEST(SweepFailures, ReplayTopKNeedsAFailuresSection) {
  const std::string text = R"({"model": "gpt2-124m", "training": {"global_batch_size": 8, "train_tokens": 1e6},
      "clusters": [{"gpu": "A100-SXM4-80GB"}], "replay_top_k": 2})";
  try {
    parse_sweep_spec(text, "k.json");
    FAIL() << "expected a ScenarioError";
  } catch (const scenario::ScenarioError& e) {
    EXPECT_EQ(e.json_path(), "/replay_top_k");
    EXPECT_NE(std::string(e.what()).find("failures"), std::string::npos);
  }
  EXPECT_THROW(parse_sweep_spec(spec_text(R"({"trials": 2})", R"(, "replay_top_k": 0)"), "k.json"),
               scenario::ScenarioError);
}

TEST(SweepFailures, NearestRankAsTheMonteCarlo) {
  EXPECT_EQ(nearest_rank({5, 1, 4, 2, 3}, 0.5), 3);
  EXPECT_EQ(nearest_rank({1, 2, 3, 4}, 0.5), 2);
  EXPECT_EQ(nearest_rank({1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 0.9), 9);
}

}  // namespace
}  // namespace trainsim::sweep
