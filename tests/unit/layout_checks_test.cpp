// scenario::check_parallelism: the typed entry to the layout checks the reader
// runs on "parallelism", with the reader's messages at /parallelism/<key>.
#include <gtest/gtest.h>

#include "scenario/errors.h"
#include "scenario/layout_checks.h"
#include "test_scenarios.h"

namespace trainsim::scenario {
namespace {

const std::string kModel = R"({"num_layers": 8, "hidden_size": 1024, "num_attention_heads": 8,
                                "seq_length": 512, "vocab_size": 32000})";

// The error check_parallelism gives for `p` on 8 GPUs (global batch 64).
ScenarioError error_for(const workload::ParallelConfig& p, bool schedule_given = false) {
  const config::Scenario base = testing::make_scenario(kModel);
  try {
    (void)check_parallelism(p, schedule_given, base);
  } catch (const ScenarioError& e) {
    return e;
  }
  ADD_FAILURE() << "no error";
  return ScenarioError("", "", "");
}

TEST(CheckParallelism, NamesTheSizeThatDoesNotDivideTheGpus) {
  workload::ParallelConfig p;
  p.tensor = 3;
  const ScenarioError e = error_for(p);
  EXPECT_EQ(e.json_path(), "/parallelism/tensor_model_parallel_size");
  EXPECT_NE(std::string(e.what()).find("tensor (3) x pipeline (1) x context (1) parallel = 3 does not divide the 8 GPUs"),
            std::string::npos)
      << e.what();
}

TEST(CheckParallelism, VirtualStagesResolveTheScheduleOrRejectAnotherNamedOne) {
  workload::ParallelConfig p;
  p.pipeline = 2;
  p.data = 4;
  p.layers_per_virtual_stage = 2;  // 8 layers / 2 stages = 4 each: 2 chunks of 2
  const config::Scenario base = testing::make_scenario(kModel);
  EXPECT_EQ(check_parallelism(p, false, base).schedule, workload::PipelineSchedule::kInterleaved1F1B);
  p.schedule = workload::PipelineSchedule::kGpipe;
  EXPECT_EQ(error_for(p, true).json_path(), "/parallelism/pipeline_schedule");
}

TEST(CheckParallelism, AVirtualStageOutOfRangeIsTheReadersRangeError) {
  workload::ParallelConfig p;
  p.pipeline = 2;
  p.data = 4;
  p.layers_per_virtual_stage = 9;  // more than the 8 layers
  const ScenarioError e = error_for(p);
  EXPECT_EQ(e.json_path(), "/parallelism/num_layers_per_virtual_pipeline_stage");
  EXPECT_NE(std::string(e.what()).find("an integer from 1 to 8"), std::string::npos) << e.what();
}

TEST(CheckParallelism, ABatchTheReplicasDoNotDivideIsATrainingError) {
  workload::ParallelConfig p;
  p.data = 8;
  config::Scenario base = testing::make_scenario(kModel);
  base.training.micro_batch_size = 16;
  try {
    (void)check_parallelism(p, false, base);
    FAIL() << "no error";
  } catch (const ScenarioError& e) {
    EXPECT_EQ(e.json_path(), "/training/global_batch_size");  // 64 % (16 x 8) != 0
  }
}

}  // namespace
}  // namespace trainsim::scenario
