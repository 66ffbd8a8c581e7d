// An owned cluster's cost of a run and the plan's front of time to train against
// cost (docs/model.md, "Owned clusters"; docs/sweep.md): hand-derived figures.
#include <gtest/gtest.h>

#include <optional>
#include <stdexcept>
#include <vector>

#include "hardware/ownership.h"
#include "scenario/cluster_file.h"
#include "sweep/plan_economics.h"

namespace trainsim {
namespace {

TEST(Ownership, CapexIsWrittenOffOverTheYearsForTheWallTime) {
  // 1,024 GPUs at $30,000, written off over 4 years (1,461 days), for a 30-day
  // run: 30,000 x 1,024 x 30 / 1,461 = $630,800.82; 1 GWh at $0.08/kWh: $80,000.
  const hw::Ownership own{30000.0, 4.0, 0.08};
  const hw::OwnedCost c = hw::owned_cost(own, 1024, 30.0 * 86400.0, 1e6);
  EXPECT_NEAR(c.capex_usd, 30000.0 * 1024.0 * 30.0 / 1461.0, 1e-6);
  EXPECT_NEAR(c.capex_usd, 630800.82, 0.01);
  EXPECT_DOUBLE_EQ(c.energy_usd, 80000.0);
  EXPECT_DOUBLE_EQ(c.total_usd(), c.capex_usd + 80000.0);
  EXPECT_THROW((void)hw::owned_cost({30000.0, 0.0, 0.08}, 1024, 1.0, 1.0), std::invalid_argument);
}

TEST(PlanEconomics, PerBillionTokensAndTheFront) {
  sweep::PlanEconomics a;
  a.time_to_train_s = 10.0;
  a.cloud_usd = 5.0;
  a.energy_kwh = 300.0;
  a.train_tokens = 3e9;
  EXPECT_DOUBLE_EQ(*a.per_billion_tokens(a.cost()), 5.0 / 3.0);
  EXPECT_DOUBLE_EQ(*a.per_billion_tokens(a.energy_kwh), 100.0);
  // Owned where given: its total, not the cloud's price.
  sweep::PlanEconomics b = a;
  b.time_to_train_s = 8.0;
  b.owned = hw::OwnedCost{6.0, 3.0};
  EXPECT_DOUBLE_EQ(*b.cost(), 9.0);
  // c is slower and dearer than a: off the front; d has no cost: off it too.
  sweep::PlanEconomics c = a;
  c.time_to_train_s = 12.0;
  c.cloud_usd = 6.0;
  sweep::PlanEconomics d = a;
  d.cloud_usd.reset();
  const std::vector<bool> front = sweep::plan_front({a, b, c, d, std::nullopt});
  EXPECT_EQ(front, (std::vector<bool>{true, true, false, false, false}));
}

TEST(PlanEconomics, ASiteFeedsWholeClustersAtFullLoad) {
  // 128 DGX H100: 1,024 x 700 W + 128 x 4,600 W = 1.3056 MW, x PUE 1.58 =
  // 2.0628 MW; a 20 MW site feeds 9 of them (9,216 GPUs).
  const hw::ClusterSpec c = scenario::parse_cluster_text(R"({"gpu": "H100-SXM5-80GB", "num_nodes": 128})", "c.json");
  const sweep::SiteFit f = sweep::site_fit(c, 20e6);
  EXPECT_NEAR(f.facility_peak_w, 1.3056e6 * 1.58, 1e-6);
  EXPECT_EQ(f.clusters, 9);
  EXPECT_EQ(f.gpus, 9216);
}

TEST(PlanEconomics, RacksTakeWholeServersOrWholeScaleUpDomains) {
  // A DGX H100 draws 8 x 700 W + 4,600 W = 10.2 kW at full load: three to a 40 kW rack
  // (30.6 kW), 128 of them in ceil(128 / 3) = 43 racks.
  const hw::ClusterSpec h100 = scenario::parse_cluster_text(R"({"gpu": "H100-SXM5-80GB", "num_nodes": 128})", "c.json");
  const sweep::RackFit h = sweep::rack_fit(h100, 40e3);
  EXPECT_DOUBLE_EQ(h.server_w, 10.2e3);
  EXPECT_EQ(h.servers_per_rack, 3);
  EXPECT_DOUBLE_EQ(h.rack_w, 30.6e3);
  EXPECT_EQ(h.racks, 43);
  // GB200 NVL72: a tray draws 4 x 1,200 W + 1,900 W = 6.7 kW, a 72-GPU domain of 18
  // trays 120.6 kW, which sits in one rack: a 132 kW rack takes one domain (16 racks for
  // 1,152 GPUs); a 40 kW rack takes none.
  const hw::ClusterSpec gb200 =
      scenario::parse_cluster_text(R"({"gpu": "GB200", "num_nodes": 288, "scale_up_domain": 72})", "c.json");
  const sweep::RackFit g = sweep::rack_fit(gb200, 132e3);
  EXPECT_DOUBLE_EQ(g.server_w, 6.7e3);
  EXPECT_EQ(g.servers_per_rack, 18);
  EXPECT_NEAR(g.rack_w, 120.6e3, 1e-6);
  EXPECT_EQ(g.racks, 16);
  EXPECT_EQ(sweep::rack_fit(gb200, 40e3).racks, 0);
}

}  // namespace
}  // namespace trainsim
