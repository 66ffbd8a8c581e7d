// Where the parallel groups' ranks sit (workload/stage_groups.h), for layouts whose
// groups do not tile the nodes.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "scenario/reader.h"
#include "workload/iteration_layout.h"
#include "workload/layout.h"
#include "workload/stage_groups.h"

namespace trainsim {
namespace {

TEST(StageGroups, AGroupThatDoesNotTileTheNodesTakesEachStagesShapeFromItsRanks) {
  // 3 nodes of 8: TP 4, PP 2, DP 3. Stage 0 holds ranks 0-11, its data-parallel group of
  // TP index 0 is {0, 4, 8}: two ranks on node 0, one on node 1. Stage 1 starts at rank
  // 12: {12, 16, 20}, one on node 1 and two on node 2. 3 ranks 4 apart do not tile nodes
  // of 8 (two a node), which the graph builder refused before.
  EXPECT_FALSE(workload::tiles_nodes(3, 4, 8));
  EXPECT_TRUE(workload::tiles_nodes(4, 4, 8));
  const config::Scenario s = scenario::parse_scenario_text(
      R"({"cluster": {"gpu": "H100-SXM5-80GB", "num_nodes": 3}, "model": {"preset": "gpt2-124m"},
          "training": {"global_batch_size": 12, "micro_batch_size": 1},
          "parallelism": {"tp": 4, "pp": 2, "dp": 3}})",
      "test.json");
  const workload::IterationLayout l = workload::iteration_layout(s.model, s.training, s.parallel, s.cluster);
  const std::vector<workload::StageGroups> g = workload::stage_groups(l);
  ASSERT_EQ(g.size(), 2U);
  for (const workload::StageGroups& stage : g) {
    EXPECT_EQ(stage.data.size, 3);
    EXPECT_EQ(stage.data.nodes, 2);
    EXPECT_EQ(stage.data.ranks_per_node, 2);
    ASSERT_TRUE(stage.data.members);
    ASSERT_EQ(stage.data.members->size(), 4U);  // one group per TP index
  }
  EXPECT_EQ(g[0].data.members->front(), (std::vector<long long>{0, 4, 8}));
  EXPECT_EQ(g[1].data.members->front(), (std::vector<long long>{12, 16, 20}));
  EXPECT_EQ(g[1].data.members->back(), (std::vector<long long>{15, 19, 23}));
  // Groups that tile keep the regular shape: TP 4 inside a node.
  EXPECT_EQ(g[1].scope.tensor.nodes, 1);
  EXPECT_EQ(g[1].scope.tensor.ranks_per_node, 4);
}

}  // namespace
}  // namespace trainsim

namespace trainsim {
namespace {

// TP 2, PP 2, DP 2 on 2 nodes of 4 GPUs, in both of Megatron-LM's rank orders.
config::Scenario two_by_two_by_two(const char* order_keys) {
  return scenario::parse_scenario_text(
      std::string(R"({"cluster": {"gpu": "H100-SXM5-80GB", "num_nodes": 2, "gpus_per_node": 4},
                      "model": {"preset": "gpt2-124m"},
                      "training": {"global_batch_size": 8, "micro_batch_size": 1},
                      "parallelism": {"tp": 2, "pp": 2, "dp": 2)") +
          order_keys + "}}",
      "test.json");
}

TEST(StageGroups, RankOrderTpCpEpDpPpKeepsAStageOnANode) {
  // rank = i + 2 x + 4 s: stage 0 is ranks 0-3 (node 0), stage 1 ranks 4-7 (node 1).
  // Data-parallel peers {0, 2} share a node; the pipeline transfer 0 -> 4 crosses.
  const config::Scenario s = two_by_two_by_two("");
  const workload::IterationLayout l = workload::iteration_layout(s.model, s.training, s.parallel, s.cluster);
  const std::vector<workload::StageGroups> g = workload::stage_groups(l);
  EXPECT_EQ(g[0].data.members->front(), (std::vector<long long>{0, 2}));
  EXPECT_EQ(g[0].data.nodes, 1);
  EXPECT_EQ(g[1].data.members->front(), (std::vector<long long>{4, 6}));
  EXPECT_EQ(g[0].to_next.members->front(), (std::vector<long long>{0, 4}));
  EXPECT_EQ(g[0].to_next.nodes, 2);
  EXPECT_EQ(l.stage_of_rank(5), 1);
}

TEST(StageGroups, RankOrderTpPpDpKeepsAReplicaOnANode) {
  // Megatron-LM's --use-tp-pp-dp-mapping: rank = i + 2 s + 4 x. Stage 0 is {0, 1, 4, 5},
  // stage 1 {2, 3, 6, 7}: the pipeline transfer 0 -> 2 stays on node 0 and the
  // data-parallel peers {0, 4} are on two nodes. Both spellings mean the same.
  for (const char* keys : {R"(, "use_tp_pp_dp_mapping": true)", R"(, "rank_order": "tp-pp-dp")"}) {
    const config::Scenario s = two_by_two_by_two(keys);
    const workload::IterationLayout l = workload::iteration_layout(s.model, s.training, s.parallel, s.cluster);
    const std::vector<workload::StageGroups> g = workload::stage_groups(l);
    EXPECT_EQ(g[0].scope.tensor.members->front(), (std::vector<long long>{0, 1}));
    EXPECT_EQ(g[0].scope.tensor.nodes, 1);
    EXPECT_EQ(g[0].data.members->front(), (std::vector<long long>{0, 4}));
    EXPECT_EQ(g[0].data.members->back(), (std::vector<long long>{1, 5}));
    EXPECT_EQ(g[0].data.nodes, 2);
    EXPECT_EQ(g[1].data.members->front(), (std::vector<long long>{2, 6}));
    EXPECT_EQ(g[0].to_next.members->front(), (std::vector<long long>{0, 2}));
    EXPECT_EQ(g[0].to_next.nodes, 1);
    EXPECT_EQ(l.rank_of_stage(1), 2);
    EXPECT_EQ(l.stage_of_rank(5), 0);  // rank 5: TP 1 of stage 0, replica 1
    EXPECT_EQ(l.stage_of_rank(6), 1);
  }
}

TEST(StageGroups, RankOrderTpPpDpRefusesContextAndExpertParallelismAndAContradiction) {
  const auto error_of = [](const char* parallelism) {
    try {
      scenario::parse_scenario_text(
          std::string(R"({"cluster": {"gpu": "H100-SXM5-80GB", "num_nodes": 2, "gpus_per_node": 4},
                          "model": {"preset": "gpt2-124m"},
                          "training": {"global_batch_size": 8, "micro_batch_size": 1},
                          "parallelism": )") + parallelism + "}",
          "test.json");
    } catch (const std::exception& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(error_of(R"({"tp": 2, "cp": 2, "use_tp_pp_dp_mapping": true})").find("without context"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"tp": 2, "rank_order": "tp-cp-ep-dp-pp", "use_tp_pp_dp_mapping": true})")
                .find("contradicts"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"rank_order": "pp-dp-tp"})").find("rank_order"), std::string::npos);
}

}  // namespace
}  // namespace trainsim
