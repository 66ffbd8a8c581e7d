// The sweep module (docs/sweep.md): counts of a small space derived by hand,
// the reader's and the memory check's verdicts, ranking, the Pareto front of a
// hand-made set, the bottleneck, and results independent of the thread count.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <optional>
#include <type_traits>

#include <string>
#include <vector>

#include "scenario/errors.h"
#include "scenario/sweep_spec_reader.h"
#include "sweep/evaluate.h"
#include "sweep/outcome.h"
#include "sweep/ranking.h"
#include "sweep/point_fields.h"
#include "sweep/result_codec.h"
#include "sweep/space.h"

namespace trainsim::sweep {
namespace {

using config::Objective;
using config::SweepSpec;
using scenario::parse_sweep_spec;

// A 4-layer model with 4 heads on one 8-GPU A100 node; global batch 8.
std::string spec_text(const std::string& space, const std::string& extra_cluster = "") {
  return R"({"name": "tiny", "model": {"num_layers": 4, "hidden_size": 256, "ffn_hidden_size": 1024,
             "num_attention_heads": 4, "num_query_groups": 4, "seq_length": 128, "vocab_size": 1000},
     "training": {"global_batch_size": 8, "train_tokens": 1e6},
     "clusters": [{"name": "one node", "gpu": "A100-SXM4-80GB", "num_nodes": 1, "price_per_gpu_hour": 2.0})" +
         extra_cluster + R"(],
     "space": )" + space + "}";
}

std::uint64_t count(const std::map<std::string, std::uint64_t>& m, const std::string& key) {
  const auto it = m.find(key);
  return it == m.end() ? 0 : it->second;
}

TEST(SweepSpace, CountsOfASmallSpaceByHand) {
  const SweepSpec spec =
      parse_sweep_spec(spec_text(R"({"tp": [1, 2, 4, 8], "pp": [1, 2, 4, 8], "mbs": [1, 2], "zero_stage": [0, 1]})"),
                       "tiny.json");
  const Enumeration e = enumerate(spec);
  // 4 tp x 4 pp x 2 mbs x 2 zero.
  EXPECT_EQ(e.combinations, 64u);
  // tp x pp divides 8 for 10 of the 16 pairs: 6 pairs x 4 = 24.
  EXPECT_EQ(count(e.pruned, kPruneGpus), 24u);
  // tp 8 does not divide 4 heads: (8, 1) x 4.
  EXPECT_EQ(count(e.pruned, kPruneHeads), 4u);
  // pp 8 exceeds 4 layers: (1, 8) x 4.
  EXPECT_EQ(count(e.pruned, kPruneLayers), 4u);
  // dp 8 (tp 1, pp 1) with mbs 2: 16 does not divide 8; x 2 zero stages.
  EXPECT_EQ(count(e.pruned, kPruneBatch), 2u);
  // dp 1 ((2, 4) and (4, 2)) with zero 1, both mbs.
  EXPECT_EQ(count(e.pruned, kPruneRedundantZero), 4u);
  // 8 pairs x 2 mbs x 2 zero - 2 - 4.
  EXPECT_EQ(e.candidates.size(), 26u);
  for (std::size_t i = 1; i < e.candidates.size(); ++i) EXPECT_LT(e.candidates[i - 1].id, e.candidates[i].id);
}

TEST(SweepSpace, AutoIsEveryValueValidOnItsOwn) {
  const SweepSpec spec = parse_sweep_spec(spec_text(R"({"tp": "auto", "pp": "auto", "vpp": "auto", "mbs": "auto"})"),
                                          "tiny.json");
  const ResolvedSpace r = resolve(spec.space, spec.clusters[0].base);
  EXPECT_EQ(r.tensor, (std::vector<long long>{1, 2, 4}));         // divisors of 8 GPUs that divide 4 heads
  EXPECT_EQ(r.pipeline, (std::vector<long long>{1, 2, 4}));       // ... that divide 4 layers
  EXPECT_EQ(r.virtual_stage, (std::vector<long long>{0, 1, 2}));  // none, or layers per virtual stage < 4
  EXPECT_EQ(r.micro_batch, (std::vector<long long>{1, 2, 4, 8}));  // divisors of the global batch
  EXPECT_FALSE(r.data.has_value());
}

TEST(SweepSpace, NodeCountListsAreClusterOptions) {
  const SweepSpec spec = parse_sweep_spec(
      spec_text("{}", R"(, {"name": "h100", "gpu": "H100-SXM5-80GB", "num_nodes": [1, 2]})"), "tiny.json");
  ASSERT_EQ(spec.clusters.size(), 3u);
  EXPECT_EQ(spec.clusters[1].name, "h100 (1 nodes)");
  EXPECT_EQ(spec.clusters[2].base.cluster.num_gpus(), 16);
}

TEST(SweepSpec, ErrorsNameTheSpecAndThePath) {
  try {
    parse_sweep_spec(spec_text(R"({"tp": [0]})"), "tiny.json");
    FAIL();
  } catch (const scenario::ScenarioError& e) {
    EXPECT_EQ(e.json_path(), "/space/tensor_model_parallel_size");
  }
  try {
    parse_sweep_spec(spec_text(R"({"tensor_paralel": [1]})"), "tiny.json");
    FAIL();
  } catch (const scenario::ScenarioError& e) {
    EXPECT_EQ(e.json_path(), "/space/tensor_paralel");
    EXPECT_NE(std::string(e.what()).find("tensor_model_parallel_size"), std::string::npos) << e.what();
  }
}

TEST(SweepEvaluate, ReaderRejectionsAreCountedUnderTheirPath) {
  // ZeRO-2 with a pipeline is refused by the scenario reader; the two ZeRO-0
  // points (with and without context parallelism) run.
  const SweepSpec spec =
      parse_sweep_spec(spec_text(R"({"tp": [1], "pp": [2], "zero_stage": [0, 2], "cp": [1, 2]})"), "tiny.json");
  const Enumeration e = enumerate(spec);
  ASSERT_EQ(e.candidates.size(), 4u);
  const Outcome o = summarize(spec, e, evaluate_points(spec, e.candidates, 1));
  EXPECT_EQ(count(o.pruned, "rejected by the scenario reader at /parallelism/zero_stage"), 2u);
  EXPECT_EQ(o.evaluated, 2u);
  EXPECT_NE(o.examples.at("rejected by the scenario reader at /parallelism/zero_stage").find("zero_stage"),
            std::string::npos);
}

TEST(SweepEvaluate, MemoryIsCheckedBeforeTiming) {
  // GPT-3 175B on one node without model parallelism: 16 B/param of states alone
  // is 2.8 TB per GPU.
  const std::string text = R"({"model": "gpt3-175b", "training": {"global_batch_size": 8, "train_tokens": 1e9},
      "clusters": [{"gpu": "A100-SXM4-80GB", "num_nodes": 1}], "space": {"tp": [1], "pp": [1]}})";
  const SweepSpec spec = parse_sweep_spec(text, "big.json");
  const Enumeration e = enumerate(spec);
  const std::vector<PointResult> r = evaluate_points(spec, e.candidates, 1);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].status, Status::kDoesNotFit);
  EXPECT_GT(r[0].peak_bytes_per_gpu, 175e9 * 16 / 2);
  EXPECT_EQ(r[0].iteration_time_s, 0.0);
}

TEST(SweepEvaluate, SameResultsOnOneOrThreeThreads) {
  const SweepSpec spec =
      parse_sweep_spec(spec_text(R"({"tp": [1, 2, 4], "pp": [1, 2], "mbs": [1, 2], "zero_stage": [0, 1]})"),
                       "tiny.json");
  const Outcome one = summarize(spec, enumerate(spec), evaluate_points(spec, enumerate(spec).candidates, 1));
  const Outcome three = summarize(spec, enumerate(spec), evaluate_points(spec, enumerate(spec).candidates, 3));
  EXPECT_GT(one.evaluated, 0u);
  EXPECT_EQ(points_csv(spec, one), points_csv(spec, three));
  EXPECT_EQ(sweep_json(spec, one).dump(), sweep_json(spec, three).dump());
  // Every evaluated point is in the ranking, best first.
  ASSERT_EQ(one.ranking.size(), one.evaluated);
  for (std::size_t k = 1; k < one.ranking.size(); ++k)
    EXPECT_LE(*one.results[one.ranking[k - 1]].time_to_train_s, *one.results[one.ranking[k]].time_to_train_s);
}

TEST(SweepEvaluate, ResultsSurviveTheWireBitForBit) {
  const SweepSpec spec = parse_sweep_spec(spec_text(R"({"tp": [2], "pp": [2]})"), "tiny.json");
  const std::vector<PointResult> r = evaluate_points(spec, enumerate(spec).candidates, 1);
  ASSERT_EQ(r.size(), 1u);
  const std::vector<PointResult> back = decode_results(encode_results(r));
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back[0].iteration_time_s, r[0].iteration_time_s);
  EXPECT_EQ(back[0].time_to_train_s, r[0].time_to_train_s);
  EXPECT_EQ(back[0].exposed_tp_s, r[0].exposed_tp_s);
  EXPECT_EQ(back[0].schedule, r[0].schedule);
  EXPECT_FALSE(back[0].reliability);
  EXPECT_THROW(decode_results({1, 2, 3}), std::invalid_argument);
}

TEST(SweepEvaluate, ReplaysSurviveTheWireBitForBit) {
  // The MPI farm sends replays back to rank 0 the same way (cli/mpi_farm.h).
  PointResult r;
  r.reliability = PointReliability{100, 1.0 / 3.0, 2.0 / 3.0, 0.5, 0.97, 12.5, 3600.0, std::nullopt, 1e-7};
  PointResult refused;
  refused.replay_error = "the recovery policy cannot shrink tp 8 pp 2";
  const std::vector<PointResult> back = decode_results(encode_results({r, refused}));
  ASSERT_EQ(back.size(), 2u);
  ASSERT_TRUE(back[0].reliability);
  EXPECT_EQ(back[0].reliability->trials, 100);
  EXPECT_EQ(back[0].reliability->time_to_train_p50_s, 1.0 / 3.0);
  EXPECT_EQ(back[0].reliability->time_to_train_p90_s, 2.0 / 3.0);
  EXPECT_EQ(back[0].reliability->goodput, 0.97);
  EXPECT_EQ(back[0].reliability->checkpoint_interval_s, 3600.0);
  EXPECT_FALSE(back[0].reliability->cost_p50_usd);
  EXPECT_EQ(back[0].reliability->energy_kwh, 1e-7);
  EXPECT_FALSE(back[1].reliability);
  EXPECT_EQ(back[1].replay_error, refused.replay_error);
}

// Every field of a point result as text, walked as the codec walks it.
template <typename T>
std::string field_text(const T& v) {
  if constexpr (std::is_enum_v<T>) {
    return std::to_string(static_cast<int>(v));
  } else if constexpr (std::is_same_v<T, std::optional<double>>) {
    return v ? field_text(*v) : "none";
  } else if constexpr (std::is_same_v<T, std::optional<PointReliability>>) {
    return v ? field_text(*v) : "none";
  } else if constexpr (std::is_same_v<T, std::string>) {
    return v;
  } else if constexpr (std::is_arithmetic_v<T>) {
    return fmt::format("{}", v);
  } else {
    std::string out;
    for_each_field(v, [&](std::string_view name, const auto& f) { out += fmt::format("{}={} ", name, field_text(f)); });
    return out;
  }
}

// A value per field, none of them its default: the i-th number is i + 1/3.
template <typename T>
void fill(T& v, int& i) {
  ++i;
  if constexpr (std::is_enum_v<T>) {
    v = Status::kDoesNotFit;
  } else if constexpr (std::is_same_v<T, bool>) {
    v = true;
  } else if constexpr (std::is_same_v<T, std::string>) {
    v = "field " + std::to_string(i);
  } else if constexpr (std::is_floating_point_v<T>) {
    v = i + 1.0 / 3.0;
  } else if constexpr (std::is_arithmetic_v<T>) {
    v = static_cast<T>(i);
  } else if constexpr (std::is_same_v<T, std::optional<double>>) {
    v = i + 1.0 / 3.0;
  } else if constexpr (std::is_same_v<T, std::optional<PointReliability>>) {
    fill(v.emplace(), i);
  } else {
    for_each_field(v, [&](std::string_view, auto& f) { fill(f, i); });
  }
}

TEST(SweepEvaluate, EveryFieldSurvivesTheWire) {
  // The codec walks sweep/point_fields.h, so no field stays behind (it once
  // dropped compute_busy_s and compute_ranks).
  PointResult r;
  int i = 0;
  fill(r, i);
  EXPECT_EQ(i, 1 + 30 + 5 + 1 + 9);  // the result and its 30 fields, the breakdown's 5, the replay and its 9
  ASSERT_NE(field_text(r), field_text(PointResult{}));
  const std::vector<PointResult> back = decode_results(encode_results({r}));
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(field_text(back[0]), field_text(r));
  EXPECT_EQ(back[0].compute_busy_s, r.compute_busy_s);
  EXPECT_EQ(back[0].compute_ranks, r.compute_ranks);
  // One field short: refused, with the reason.
  nlohmann::json short_point = nlohmann::json::from_msgpack(encode_results({r}));
  short_point[0].erase(short_point[0].size() - 1);
  EXPECT_THROW(decode_results(nlohmann::json::to_msgpack(short_point)), std::invalid_argument);
}

PointResult timed(std::uint64_t id, double time, std::optional<double> cost = {}) {
  PointResult r;
  r.id = id;
  r.status = Status::kEvaluated;
  r.time_to_train_s = time;
  r.cost_usd = cost;
  return r;
}

TEST(SweepRanking, ByObjectiveThenId) {
  std::vector<PointResult> r = {timed(0, 5.0, 1.0), timed(1, 3.0, 9.0), timed(2, 3.0, 2.0), timed(3, 1.0)};
  r.push_back(PointResult{});  // rejected: not ranked
  r[4].id = 4;
  config::SweepSpec spec;
  spec.clusters.resize(1);
  const std::vector<Point> points(r.size());  // all of option 0, which has a cloud price only
  spec.objective = Objective::kTimeToTrain;
  EXPECT_EQ(rank(r, points, spec), (std::vector<std::size_t>{3, 1, 2, 0}));
  // Point 3 has no cost: not ranked by cost.
  spec.objective = Objective::kCost;
  EXPECT_EQ(rank(r, points, spec), (std::vector<std::size_t>{0, 2, 1}));
}

TEST(SweepRanking, ByOwnedCostWhereTheOptionOwnsItsGpus) {
  // Option 1 owns its 8 GPUs at $31,557.60 each, written off over one year: $0.001 per
  // GPU-second, $0.008 a second; electricity $0.10 per kWh. Point 0 (owned): 1,000 s and
  // 10 kWh, $8 + $1 = $9; point 1 (cloud, option 0): $5; point 2 (owned): 500 s and
  // 100 kWh, $4 + $10 = $14. By cost: 1, 0, 2, whatever the cloud price of the owned ones.
  config::SweepSpec spec;
  spec.clusters.resize(2);
  spec.clusters[1].base.cluster.ownership = hw::Ownership{31557.6, 1.0, 0.10};
  spec.objective = Objective::kCost;
  std::vector<PointResult> r = {timed(0, 1000.0, 1.0), timed(1, 2000.0, 5.0), timed(2, 500.0, 1.0)};
  r[0].energy_kwh = 10.0;
  r[2].energy_kwh = 100.0;
  std::vector<Point> points(3);
  points[0].cluster = 1;
  points[2].cluster = 1;
  EXPECT_EQ(rank(r, points, spec), (std::vector<std::size_t>{1, 0, 2}));
  EXPECT_NEAR(*objective_of(r[0], spec.clusters[1], Objective::kCost), 9.0, 1e-12);
}

TEST(SweepRanking, ParetoFrontOfAHandMadeSet) {
  // (time, cost): A(1, 10) B(2, 5) C(3, 6) D(4, 1) E(2, 5) F(1, 12).
  // C is dominated by B, F by A (same time, dearer); B and E are equal: both stay.
  const std::vector<TimeCost> points = {{1, 10, 0}, {2, 5, 1}, {3, 6, 2}, {4, 1, 3}, {2, 5, 4}, {1, 12, 5}};
  EXPECT_EQ(pareto_front(std::span<const TimeCost>(points)), (std::vector<std::size_t>{0, 1, 4, 3}));
}

TEST(SweepRanking, BottleneckIsTheLargestShare) {
  PointResult r = timed(0, 1.0);
  r.iteration_time_s = 10.0;
  r.breakdown_s.compute = 6.0;  // of which 2 s recomputation
  r.recompute_s = 2.0;
  r.breakdown_s.optimizer = 0.5;
  r.exposed_tp_s = 1.0;
  r.exposed_dp_s = 0.5;
  r.breakdown_s.pipeline_bubble = 1.5;
  Bottleneck b = bottleneck(r);
  EXPECT_EQ(b.name, "compute");  // 6 - 2 + 0.5
  EXPECT_DOUBLE_EQ(b.seconds, 4.5);
  EXPECT_DOUBLE_EQ(b.share, 0.45);
  r.exposed_dp_s = 5.0;
  EXPECT_EQ(bottleneck(r).name, "dp_communication");
}

}  // namespace
}  // namespace trainsim::sweep
