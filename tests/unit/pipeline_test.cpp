// Pipeline schedules against their closed forms with free communication:
// the bubble of GPipe and 1F1B is (p-1)/(m+p-1) of the iteration (Huang et al.
// 2019; Narayanan et al. 2021), interleaving v chunks makes it (p-1)/(v m+p-1)
// (Narayanan et al., SC'21, section 2.2), and the first stage keeps p (1F1B),
// m (GPipe) or p (1 + (p-1)/(p v)) (interleaved) micro-batches in flight.
#include <gtest/gtest.h>

#include "execution/simulate.h"
#include "test_scenarios.h"
#include "workload/iteration_builder.h"
#include "report/metrics.h"
#include "scenario/reader.h"
#include "workload/memory.h"
#include "workload/pipeline_schedule.h"

namespace trainsim {
namespace {

// Four stages of two equal layers each on one node whose links cost nothing;
// a 64-word vocabulary keeps the embedding and the head out of the balance.
config::Scenario free_pipeline(const std::string& schedule, const std::string& extra = "") {
  const std::string text = R"({"cluster": {"gpu": "H100-SXM5-80GB", "num_nodes": 1, "gpus_per_node": 4,
      "intra_node": {"bandwidth": "1000TB/s", "latency": "0us", "nvls_latency": "0us"}},
    "model": {"num_layers": 8, "hidden_size": 1024, "num_attention_heads": 8, "seq_length": 1024, "vocab_size": 64},
    "training": {"global_batch_size": 8, "micro_batch_size": 1},
    "parallelism": {"pp": 4, "dp": 1, "pipeline_schedule": ")" +
                           schedule + "\"" + extra + "}}";
  return scenario::parse_scenario_text(text, "pipeline.json");
}

double bubble_fraction(const config::Scenario& s) {
  const auto out = exec::simulate(s);
  const report::Metrics m = report::compute_metrics(s, out);
  EXPECT_EQ(m.breakdown_s.other, 0.0);
  return m.breakdown_s.pipeline_bubble / (m.iteration_time_s - m.breakdown_s.optimizer);
}

TEST(Pipeline, OneFOneBBubbleIsPMinusOneOverMPlusPMinusOne) {
  EXPECT_NEAR(bubble_fraction(free_pipeline("1f1b")), 3.0 / 11.0, 0.01 * 3.0 / 11.0);
}

TEST(Pipeline, GpipeHasTheSameBubble) {
  EXPECT_NEAR(bubble_fraction(free_pipeline("gpipe")), 3.0 / 11.0, 0.01 * 3.0 / 11.0);
}

TEST(Pipeline, InterleavingDividesTheBubbleByV) {
  // v = 2 chunks of one layer per stage: (p-1)/(v m + p-1) = 3/19. The
  // remaining 2% are the extra activation transfers' start-up (one per chunk).
  const double f = bubble_fraction(free_pipeline("interleaved_1f1b", R"(, "num_layers_per_virtual_pipeline_stage": 1)"));
  EXPECT_NEAR(f, 3.0 / 19.0, 0.03 * 3.0 / 19.0);
}

TEST(Pipeline, FirstStageKeepsTheScheduleInFlightMicroBatches) {
  const auto in_flight = [](const config::Scenario& s) {
    return workload::memory_per_stage(s.model, s.training, s.parallel).front().in_flight_microbatches;
  };
  EXPECT_DOUBLE_EQ(in_flight(free_pipeline("1f1b")), 4.0);
  EXPECT_DOUBLE_EQ(in_flight(free_pipeline("gpipe")), 8.0);
  // Megatron-LM's theoretical memory: p (1 + (p-1)/(p v)) = 4 x 1.375.
  EXPECT_DOUBLE_EQ(in_flight(free_pipeline("interleaved_1f1b", R"(, "num_layers_per_virtual_pipeline_stage": 1)")),
                   5.5);
  // The last stage of 1F1B runs each backward right after its forward.
  EXPECT_DOUBLE_EQ(workload::memory_per_stage(free_pipeline("1f1b").model, free_pipeline("1f1b").training,
                                              free_pipeline("1f1b").parallel)
                       .back()
                       .in_flight_microbatches,
                   1.0);
}

TEST(Pipeline, UnevenSplitPutsTheExtraLayersFirst) {
  EXPECT_EQ(workload::split_layers(10, 4), (std::vector<long long>{3, 3, 2, 2}));
  EXPECT_EQ(workload::split_layers(8, 4), (std::vector<long long>{2, 2, 2, 2}));
}

TEST(Pipeline, OneFOneBWarmupThenAlternates) {
  // Stage 1 of 4 with 6 micro-batches: p - s - 1 = 2 forwards of warm-up.
  const auto steps = workload::pipeline_steps(workload::PipelineSchedule::k1F1B, 4, 1, 6, 1);
  std::string order;
  for (const auto& st : steps) order += (st.forward ? "F" : "B") + std::to_string(st.microbatch) + " ";
  EXPECT_EQ(order, "F0 F1 F2 B0 F3 B1 F4 B2 F5 B3 B4 B5 ");
}

}  // namespace
}  // namespace trainsim

namespace trainsim {
namespace {

TEST(InterleavedUneven, LlamaThreeLayersOnSixteenStagesLeaveTheLastVirtualStagesShort) {
  // 126 layers, 16 stages of at most 8 layers, 2 per virtual stage: 4 chunks, 64
  // virtual stages; 126 = 62 x 2 + 2 x 1, the short ones last.
  const auto s = testing::make_scenario(
      R"({"num_layers": 126, "hidden_size": 256, "num_attention_heads": 4, "seq_length": 128, "vocab_size": 1024})",
      R"("micro_batch_size": 1)", R"("pp": 16, "vpp": 2)", 2);
  const auto g = workload::build_iteration_graph(s.model, s.training, s.parallel, s.cluster, 1);
  ASSERT_EQ(g.layers_per_virtual_stage.size(), 64U);
  for (std::size_t j = 0; j < 64; ++j) EXPECT_EQ(g.layers_per_virtual_stage[j], j < 62 ? 2 : 1) << j;
}

}  // namespace
}  // namespace trainsim
