// Where the parallel groups' ranks sit (workload/stage_groups.h), for layouts whose
// groups do not tile the nodes.
#include <gtest/gtest.h>

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
