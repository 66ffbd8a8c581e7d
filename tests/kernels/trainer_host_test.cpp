// trainsim-train's host logic (kernels/trainer): learning-rate schedule, corpus split and
// sampling, gradient bucket plan, checkpoint round trip, step statistics and RUN.json.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <numbers>

#include "buckets.h"
#include "checkpoint.h"
#include "corpus.h"
#include "options.h"
#include "run_file.h"

namespace trainsim::trainer {
namespace {

TrainOptions small_options() {
  TrainOptions o;
  o.layers = 2;
  o.hidden = 128;
  o.heads = 2;
  o.seq = 64;
  o.steps = 20;
  o.warmup_steps = 2;
  o.lr = 1e-3;
  o.lr_warmup = 4;
  o.min_lr_ratio = 0.1;
  o.data = "x";
  return o;
}

TEST(TrainerSchedule, LinearWarmupThenCosine) {
  const TrainOptions o = small_options();
  EXPECT_DOUBLE_EQ(learning_rate(o, 0), 1e-3 * 1 / 4);
  EXPECT_DOUBLE_EQ(learning_rate(o, 3), 1e-3);
  EXPECT_DOUBLE_EQ(learning_rate(o, 4), 1e-3);  // cosine at progress 0
  // 16 decay steps (4..19): progress (s - 4) / 15; the last step reaches min_lr.
  EXPECT_NEAR(learning_rate(o, 19), 1e-4, 1e-15);
  const double mid = 1e-4 + 0.5 * (1.0 + std::cos(std::numbers::pi * 7.5 / 15.0)) * 9e-4;  // s = 11.5
  EXPECT_GT(learning_rate(o, 11), mid);
  EXPECT_LT(learning_rate(o, 12), mid);
}

TEST(TrainerOptions, AnUnknownOptionIsAUsageErrorAndABadValueIsNot) {
  TrainOptions o;
  const char* unknown[] = {"trainsim-train", "--data", "x.txt", "--bogus"};
  EXPECT_THROW(parse_options(4, const_cast<char**>(unknown), o), UsageError);
  const char* bad_value[] = {"trainsim-train", "--data", "x.txt", "--heads", "5"};
  try {
    parse_options(5, const_cast<char**>(bad_value), o);
    FAIL() << "accepted";
  } catch (const UsageError&) {
    FAIL() << "a bad value is not a usage error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("--heads"), std::string::npos) << e.what();
  }
}

TEST(TrainerOptions, RejectsUnsupportedShapes) {
  TrainOptions o = small_options();
  EXPECT_NO_THROW(check_options(o));
  o.heads = 4;  // head_dim 32: no flash kernel
  EXPECT_THROW(check_options(o), std::invalid_argument);
  o = small_options();
  o.warmup_steps = 20;
  EXPECT_THROW(check_options(o), std::invalid_argument);
  o = small_options();
  o.vocab = 100;
  EXPECT_THROW(check_options(o), std::invalid_argument);
  // Byte-level 256 is already a multiple of 128: no padding; 50257 pads to 50304.
  EXPECT_EQ(small_options().model().padded_vocab, 256);
  o = small_options();
  o.vocab = 50257;
  EXPECT_EQ(o.model().padded_vocab, 50304);
}

TEST(TrainerCorpus, HeldOutIsTheLastFivePercent) {
  std::vector<unsigned char> bytes(1000);
  for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<unsigned char>(i % 251);
  const Corpus c(bytes, 0.05, 8, "mem");
  EXPECT_EQ(c.train_bytes(), 950u);
  EXPECT_EQ(c.held_out_bytes(), 50u);
  EXPECT_EQ(c.held_out_windows(), 5u);  // 50 / (8 + 1)
  std::vector<int> tok(16), tgt(16);
  c.held_out_batch(1, 2, tok, tgt);
  EXPECT_EQ(tok[0], 959 % 251);  // window 1 starts at 950 + 9
  EXPECT_EQ(tgt[0], 960 % 251);
  EXPECT_EQ(tok[8], 968 % 251);  // window 2 at 950 + 18
  EXPECT_THROW(c.held_out_batch(4, 2, tok, tgt), std::invalid_argument);
  // Training windows stay inside the training split, targets are the next byte, and the
  // same (seed, step, micro, rank) gives the same batch.
  std::vector<int> again(16), again_t(16);
  for (int step = 0; step < 50; ++step) {
    c.train_batch(7, step, 1, 0, 2, tok, tgt);
    c.train_batch(7, step, 1, 0, 2, again, again_t);
    EXPECT_EQ(tok, again);
    for (int b = 0; b < 2; ++b) {
      const int first = tok[static_cast<std::size_t>(b) * 8];
      for (int t = 0; t < 8; ++t) {
        const auto i = static_cast<std::size_t>(b * 8 + t);
        EXPECT_EQ(tok[i], (first + t) % 251);
        EXPECT_EQ(tgt[i], (first + t + 1) % 251);
      }
    }
  }
  c.train_batch(7, 0, 0, 1, 2, again, again_t);
  c.train_batch(7, 0, 0, 0, 2, tok, tgt);
  EXPECT_NE(tok, again);  // ranks draw different windows
  EXPECT_THROW(Corpus(std::vector<unsigned char>(12), 0.05, 8, "tiny"), std::runtime_error);
}

TEST(TrainerBuckets, ContiguousLayerRangesFromTheEnd) {
  const kernels::ref::GptConfig cfg{4, 64, 1, 16, 256, 256};
  const auto layout = kernels::ref::gpt_layout(cfg);
  const std::size_t per_layer = 12 * 64 * 64 + 13 * 64;  // 49,984
  ASSERT_EQ(layout.layer[0].end - layout.layer[0].begin, per_layer);
  // Two layers per bucket: 99,968 elements reach a 60,000 limit after the second layer.
  const auto b = plan_buckets(layout, 60000);
  ASSERT_EQ(b.size(), 3u);
  EXPECT_EQ(b[0].end, layout.total);  // lnf rides with the last layers
  EXPECT_EQ(b[0].begin, layout.layer[2].begin);
  EXPECT_EQ(b[0].ready_after_layer, 2);
  EXPECT_EQ(b[1].begin, layout.layer[0].begin);
  EXPECT_EQ(b[1].end, layout.layer[2].begin);
  EXPECT_EQ(b[1].ready_after_layer, 0);
  EXPECT_EQ(b[2].begin, 0u);
  EXPECT_EQ(b[2].end, layout.layer[0].begin);
  EXPECT_EQ(b[2].ready_after_layer, -1);
  EXPECT_EQ(plan_buckets(layout, 1).size(), 5u);  // one per layer, then the embeddings
}

TEST(TrainerCheckpoint, RoundTripAndShapeMismatch) {
  const kernels::ref::GptConfig cfg{1, 64, 1, 16, 256, 256};
  CheckpointState s;
  s.model = cfg;
  s.next_step = 7;
  s.seed = 99;
  const std::size_t n = kernels::ref::gpt_layout(cfg).total;
  s.params = kernels::ref::gpt_init(cfg, 3);
  s.m.assign(n, 0.25f);
  s.v.assign(n, -1.5f);
  const auto path = std::filesystem::temp_directory_path() / ("trainsim_ckpt_test_" + std::to_string(::getpid()) + ".bin");
  save_checkpoint(path, s);
  const CheckpointState r = load_checkpoint(path, cfg);
  EXPECT_EQ(r.next_step, 7);
  EXPECT_EQ(r.seed, 99u);
  EXPECT_EQ(r.params, s.params);
  EXPECT_EQ(r.m, s.m);
  EXPECT_EQ(r.v, s.v);
  kernels::ref::GptConfig other = cfg;
  other.layers = 2;
  try {
    (void)load_checkpoint(path, other);
    ADD_FAILURE() << "a checkpoint of another shape loaded";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("\"layers\" is 1"), std::string::npos) << e.what();
  }
  std::filesystem::remove(path);
}

TEST(TrainerRunFile, StatisticsAndFields) {
  MeasuredRun run;
  run.options = small_options();
  run.options.warmup_steps = 2;
  run.options.command = "trainsim-train --layers 2";
  run.date = "2026-11-23T01:00:00Z";
  const double t[] = {0.9, 0.8, 0.04, 0.01, 0.03, 0.02};
  for (int i = 0; i < 6; ++i) run.steps.push_back({i, t[i], 5.5 - i * 0.5, 512});
  const StepStats st = step_stats(run.steps, 2);
  EXPECT_EQ(st.steps_timed, 4);
  EXPECT_DOUBLE_EQ(st.median, 0.025);
  EXPECT_DOUBLE_EQ(st.mean, 0.025);
  EXPECT_DOUBLE_EQ(st.min, 0.01);
  EXPECT_DOUBLE_EQ(st.max, 0.04);
  run.kernel_class_s[kernel_class_index("gemm")] = 0.02;
  run.spans.push_back({0, "compute", "forward", "layer0.mlp_up", 0.001, 0.002, 5, 0, 0});
  const auto dir = std::filesystem::temp_directory_path() / (std::string("trainsim_run_file_test_") + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  write_measured_run(dir / "RUN.json", run);
  std::ifstream in(dir / "RUN.json");
  const auto j = nlohmann::json::parse(in);
  EXPECT_EQ(j["format"], "trainsim-measured-run");
  EXPECT_EQ(j["model"]["vocab_size"], 256);
  EXPECT_EQ(j["model"]["ffn_hidden_size"], 512);
  EXPECT_EQ(j["steps"].size(), 6u);
  EXPECT_EQ(j["kernel_class_s"].size(), 10u);
  EXPECT_DOUBLE_EQ(j["kernel_class_s"]["gemm"].get<double>(), 0.02);
  EXPECT_DOUBLE_EQ(j["loss"]["initial"].get<double>(), 5.5);
  EXPECT_DOUBLE_EQ(j["loss"]["final"].get<double>(), 3.0);
  EXPECT_EQ(j["timeline"], "RUN.timeline.json");
  std::ifstream tin(dir / "RUN.timeline.json");
  const auto tl = nlohmann::json::parse(tin);
  EXPECT_EQ(tl["format"], "trainsim-timeline");
  EXPECT_EQ(tl["lanes"][0]["spans"][0]["name"], "layer0.mlp_up");
  std::filesystem::remove_all(dir);
  EXPECT_THROW((void)kernel_class_index("matmul"), std::invalid_argument);
}

}  // namespace
}  // namespace trainsim::trainer
