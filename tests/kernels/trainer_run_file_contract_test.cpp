// The RUN.json contract end to end on the CPU: a file written by trainsim-train's writer
// (kernels/trainer/run_file.h) is read by trainsim validate's reader
// (sim/scenario/measured_run.h) and becomes a scenario, for the shapes
// scripts/device-session.sh runs (GPT-2 124M, B 8, T 1024, vocabulary 50257 padded to 50304)
// on one GPU and on two data-parallel ranks. Before, the writer's test parsed its own output
// and the reader's test read a hand-written fixture, so a drift between the two would have
// shown only after a GPU run.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>

#include "run_file.h"
#include "scenario/measured_run.h"

namespace trainsim::trainer {
namespace {

MeasuredRun gpt2_124m_run(int ranks) {
  MeasuredRun run;
  TrainOptions& o = run.options;
  o.layers = 12;
  o.hidden = 768;
  o.heads = 12;
  o.seq = 1024;
  o.vocab = 50257;  // padded to 50304 by the default --vocab-multiple 128
  o.micro_batch = 8;
  o.steps = 6;
  o.warmup_steps = 2;
  o.data = "kjv.txt";
  o.command = "trainsim-train --layers 12 --vocab 50257";
  run.date = "2026-11-23T08:00:00Z";
  run.device = {"NVIDIA H200", "CUDA driver API 13.0", "13.0", "13.0.0", "2.27.7", ranks, 1};
  run.data_parallel = ranks;
  run.gpus_per_node = ranks;
  // Timed steps 2..5: 0.30, 0.10, 0.20, 0.40 s -> median (0.20 + 0.30) / 2 = 0.25.
  const double t[] = {2.0, 0.9, 0.30, 0.10, 0.20, 0.40};
  for (int i = 0; i < 6; ++i) run.steps.push_back({i, t[i], 10.8 - 0.5 * i, 8192LL * ranks});
  run.kernel_class_s[kernel_class_index("gemm")] = 0.15;
  run.kernel_class_s[kernel_class_index("attention")] = 0.03;
  run.kernel_class_s[kernel_class_index("all_reduce")] = ranks > 1 ? 0.01 : 0.0;
  run.peak_memory_bytes = 2.5e10;
  run.peak_memory_source = "cudaMemGetInfo";
  run.held_out_loss = 8.25;
  run.held_out_tokens = 8192;
  for (int r = 0; r < ranks; ++r) {
    run.spans.push_back({r, "compute", "forward", "layer0.qkv_proj", 0.001, 0.002, 5, 0, 0});
    if (ranks > 1) run.spans.push_back({r, "dp_comm", "all_reduce", "grad_bucket.layer0", 0.2, 0.21, 5, -1, 0});
  }
  return run;
}

class RunFileContract : public ::testing::TestWithParam<int> {};

TEST_P(RunFileContract, TheTrainersFileReadsBackAsTheSameRunAndScenario) {
  const int ranks = GetParam();
  const auto dir = std::filesystem::temp_directory_path() /
                   ("trainsim_run_file_contract_" + std::to_string(ranks) + "_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const MeasuredRun run = gpt2_124m_run(ranks);
  write_measured_run(dir / "RUN.json", run);

  const scenario::MeasuredRun r = scenario::read_measured_run(dir / "RUN.json");
  EXPECT_EQ(r.device_name, "NVIDIA H200");
  EXPECT_EQ(r.device_count, ranks);
  EXPECT_EQ(r.num_layers, 12);
  EXPECT_EQ(r.hidden_size, 768);
  EXPECT_EQ(r.num_attention_heads, 12);
  EXPECT_EQ(r.ffn_hidden_size, 4 * 768);
  EXPECT_EQ(r.seq_length, 1024);
  EXPECT_EQ(r.vocab_size, 50304);  // the LM head as trained: 50257 rounded up to 128
  EXPECT_TRUE(r.tied_embeddings);
  EXPECT_EQ(r.micro_batch_size, 8);
  EXPECT_EQ(r.grad_accumulation_steps, 1);
  EXPECT_EQ(r.data_parallel_size, ranks);
  EXPECT_EQ(r.gpus_per_node, ranks);
  EXPECT_EQ(r.num_nodes, 1);
  EXPECT_EQ(r.warmup_steps, 2);
  EXPECT_EQ(r.steps_timed, 4);
  EXPECT_DOUBLE_EQ(r.step_median_s, 0.25);
  EXPECT_DOUBLE_EQ(r.step_min_s, 0.10);
  EXPECT_DOUBLE_EQ(r.step_max_s, 0.40);
  // One class list for both sides: every class lands in the reader's slot of the same name.
  for (std::size_t i = 0; i < kKernelClasses.size(); ++i)
    EXPECT_DOUBLE_EQ(r.kernel_class_s[i], run.kernel_class_s[i]) << kKernelClasses[i];
  ASSERT_TRUE(r.peak_memory_bytes.has_value());
  EXPECT_DOUBLE_EQ(*r.peak_memory_bytes, 2.5e10);
  ASSERT_TRUE(r.loss_initial && r.loss_final && r.loss_held_out);
  EXPECT_DOUBLE_EQ(*r.loss_initial, 10.8);
  EXPECT_DOUBLE_EQ(*r.loss_final, 8.3);
  EXPECT_DOUBLE_EQ(*r.loss_held_out, 8.25);
  EXPECT_EQ(r.timeline, (dir / "RUN.timeline.json").lexically_normal());
  EXPECT_TRUE(std::filesystem::exists(r.timeline));

  // trainsim validate's scenario of the same run: the H200 preset from the device name.
  EXPECT_EQ(scenario::gpu_preset_for_device(r.device_name), "H200-SXM-141GB");
  EXPECT_NO_THROW((void)scenario::scenario_for_measured_run(r));
  std::filesystem::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(OneAndTwoRanks, RunFileContract, ::testing::Values(1, 2));

}  // namespace
}  // namespace trainsim::trainer
