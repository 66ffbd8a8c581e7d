// The timeline reader against the contract (docs/results.md, "Timeline file").
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "execution/simulate.h"
#include "gui_fixtures.h"
#include "model/run.h"
#include "model/timeline_reader.h"
#include "report/gzip_stream.h"
#include "report/timeline_writer.h"
#include "scenario/reader.h"

namespace trainsim::gui {
namespace {

TEST(TimelineReader, ReadsLanesSpansAndCounters) {
  const TimelineData t = parse_timeline_text(testing::two_node_timeline(), "fixture");
  EXPECT_EQ(t.scenario, "two nodes");
  EXPECT_EQ(t.num_gpus, 2);
  ASSERT_EQ(t.lanes.size(), 3u);
  EXPECT_EQ(t.lanes[0].rank, 0);
  EXPECT_EQ(t.lanes[0].stream, "compute");
  EXPECT_EQ(t.lanes[1].stream, "dp_comm");
  EXPECT_EQ(t.lanes[2].rank, 1);
  EXPECT_EQ(t.lanes[2].node, 1);
  EXPECT_EQ(t.span_count(), 5u);
  const Span& bwd = t.lanes[0].spans[1];
  EXPECT_EQ(t.name_of(bwd), "bwd");
  EXPECT_EQ(bwd.category, Category::kBackward);
  EXPECT_DOUBLE_EQ(bwd.start, 1.0);
  EXPECT_DOUBLE_EQ(bwd.end, 2.0);
  EXPECT_DOUBLE_EQ(bwd.flops, 8e12);
  EXPECT_EQ(t.lanes[1].spans[0].microbatch, -1);
  ASSERT_EQ(t.counters.size(), 1u);
  EXPECT_EQ(t.counters[0].unit, "fraction");
  ASSERT_EQ(t.counters[0].points.size(), 2u);
  EXPECT_DOUBLE_EQ(t.counters[0].points[0].second, 0.5);
  EXPECT_DOUBLE_EQ(t.t_begin, 0.0);
  EXPECT_DOUBLE_EQ(t.t_end, 2.0);
  // max_end: fwd ends at 1, then bwd at 2.
  EXPECT_DOUBLE_EQ(t.lanes[0].max_end[0], 1.0);
  EXPECT_DOUBLE_EQ(t.lanes[0].max_end[1], 2.0);
}

TEST(TimelineReader, ScalesOtherTimeUnitsToSeconds) {
  const TimelineData t = parse_timeline_text(
      R"({"format": "trainsim-timeline", "time_unit": "ms", "lanes": [{"rank": 0, "stream": "compute", "spans": [
         {"category": "forward", "name": "k", "start": 2, "end": 5}]}], "counters": []})",
      "ms");
  EXPECT_DOUBLE_EQ(t.lanes[0].spans[0].start, 0.002);
  EXPECT_DOUBLE_EQ(t.lanes[0].spans[0].end, 0.005);
}

TEST(TimelineReader, ReadsIdsAndDeps) {
  const TimelineData t = parse_timeline_text(
      R"({"format": "trainsim-timeline", "lanes": [{"rank": 0, "stream": "compute", "spans": [
         {"category": "forward", "name": "a", "start": 0, "end": 1, "id": 7},
         {"category": "forward", "name": "b", "start": 1, "end": 2, "id": 8, "deps": [7, 3]}]}]})",
      "deps");
  const Span& b = t.lanes[0].spans[1];
  EXPECT_EQ(b.id, 8);
  ASSERT_EQ(b.deps_count, 2u);
  EXPECT_EQ(t.deps[b.deps_begin], 7);
  EXPECT_EQ(t.deps[b.deps_begin + 1], 3);
}

TEST(TimelineReader, SortsSpansByStart) {
  const TimelineData t = parse_timeline_text(
      R"({"format": "trainsim-timeline", "lanes": [{"rank": 0, "stream": "compute", "spans": [
         {"category": "idle", "name": "late", "start": 3, "end": 4},
         {"category": "failure", "name": "early", "start": 1, "end": 2}]}]})",
      "unsorted");
  EXPECT_EQ(t.name_of(t.lanes[0].spans[0]), "early");
  EXPECT_EQ(t.lanes[0].spans[0].category, Category::kFailure);
  EXPECT_EQ(t.lanes[0].spans[1].category, Category::kIdle);
}

TEST(TimelineReader, NamesTheProblem) {
  try {
    parse_timeline_text(R"({"format": "chrome-trace", "lanes": []})", "x.json");
    FAIL() << "no error";
  } catch (const ReadError& e) {
    EXPECT_STREQ(e.what(), "x.json: /format: expected \"trainsim-timeline\", found \"chrome-trace\"");
  }
  EXPECT_THROW(parse_timeline_text(R"({"format": "trainsim-timeline", "lanes": [)", "cut.json"), ReadError);
  EXPECT_THROW(parse_timeline_text(R"({"format": "trainsim-timeline", "time_unit": "h"})", "h.json"), ReadError);
  EXPECT_THROW(read_timeline_file("/nonexistent/t.json"), ReadError);
}

TEST(LoadRun, ReadsTheResultAndTheTimelineBesideIt) {
  const auto dir = std::filesystem::temp_directory_path() / (std::string("trainsim_gui_load_run_test_") + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "r.timeline.json") << testing::two_node_timeline();
  std::ofstream(dir / "r.json") << R"({"scenario": "two nodes", "num_gpus": 2, "iteration_time_s": 2.0,
    "tokens_per_s": 1000.0, "model_flops_per_iteration": 1e13, "tflops_per_gpu": 2.5, "mfu": 0.25,
    "breakdown_s": {"compute": 1.5, "exposed_communication": 0.5}, "memory": {"peak_bytes_per_gpu": 10,
    "capacity_bytes_per_gpu": 20, "fits": true}, "time_to_train_s": null, "cost_usd": 12.5,
    "reliability": {"goodput": 0.9}, "timeline": "r.timeline.json"})";
  const gui::Run run = load_run(dir / "r.json");
  ASSERT_TRUE(run.result.has_value());
  EXPECT_DOUBLE_EQ(run.result->mfu, 0.25);
  EXPECT_FALSE(run.result->time_to_train_s.has_value());
  EXPECT_DOUBLE_EQ(*run.result->cost_usd, 12.5);
  EXPECT_DOUBLE_EQ(run.result->goodput, 0.9);
  ASSERT_EQ(run.result->breakdown_s.size(), 2u);
  EXPECT_EQ(run.result->breakdown_s[1].first, "exposed_communication");
  EXPECT_EQ(run.timeline->span_count(), 5u);
  // A timeline alone is a measured run: no result.
  const gui::Run measured = load_run(dir / "r.timeline.json");
  EXPECT_FALSE(measured.result.has_value());
  EXPECT_EQ(measured.timeline->lanes.size(), 3u);
  std::filesystem::remove_all(dir);
}

TEST(LoadRun, ReadsAMeasuredRunAndItsTimeline) {
  // tests/data/measured_run_fixture.json: hand-written numbers in the format
  // trainsim-train writes (docs/validation.md, "Measured run file").
  const gui::Run run = load_run(TRAINSIM_SOURCE_DIR "/tests/data/measured_run_fixture.json");
  ASSERT_TRUE(run.result.has_value());
  ASSERT_TRUE(run.result->measured.has_value());
  EXPECT_EQ(run.result->scenario, "measured: NVIDIA H100 80GB HBM3");
  EXPECT_EQ(run.result->num_gpus, 1);
  EXPECT_DOUBLE_EQ(run.result->iteration_time_s, 0.0125);  // step_time_s.median
  // 8 sequences x 2 accumulation steps x 1024 tokens per step of 12.5 ms.
  EXPECT_DOUBLE_EQ(run.result->tokens_per_s, 16384 / 0.0125);
  ASSERT_EQ(run.result->breakdown_s.size(), 10u);  // the kernel classes, in their order
  EXPECT_EQ(run.result->breakdown_s[0].first, "gemm");
  EXPECT_DOUBLE_EQ(run.result->breakdown_s[0].second, 0.008);
  EXPECT_DOUBLE_EQ(run.result->peak_bytes_per_gpu, 6e9);
  const MeasuredFigures& m = *run.result->measured;
  EXPECT_EQ(m.steps_timed, 3);
  EXPECT_DOUBLE_EQ(m.step_min_s, 0.0124);
  EXPECT_DOUBLE_EQ(*m.loss_held_out, 9.35);
  EXPECT_EQ(run.timeline->span_count(), 2u);  // measured_run_fixture.timeline.json, beside it
  EXPECT_EQ(run.timeline->scenario, "test fixture");
}

TEST(LoadRun, ReadsAPytorchProfilerTraceAsAMeasuredStep) {
  // tests/data/torch_traces/rank0.json (tests/unit/torch_trace_test.cpp): steps of 1000
  // and 1050 us, each with a 300 us GEMM and 150 us of NCCL no other kernel hides.
  const gui::Run run = load_run(TRAINSIM_SOURCE_DIR "/tests/data/torch_traces/rank0.json");
  ASSERT_TRUE(run.result.has_value());
  ASSERT_TRUE(run.result->measured.has_value());
  EXPECT_EQ(run.result->scenario, "measured (torch.profiler): NVIDIA H100 80GB HBM3");
  EXPECT_NEAR(run.result->iteration_time_s, 1025e-6, 1e-12);  // the median of the two
  EXPECT_EQ(run.result->breakdown_s[0].first, "gemm");
  EXPECT_NEAR(run.result->breakdown_s[0].second, 300e-6, 1e-12);
  EXPECT_NEAR(run.result->breakdown_s[8].second, 150e-6, 1e-12);  // all_reduce: exposed
  EXPECT_EQ(run.result->measured->steps_timed, 2);
  // ProfilerStep#3's kernels: streams 7 and 20.
  EXPECT_EQ(run.timeline->lanes.size(), 2u);
  EXPECT_EQ(run.timeline->span_count(), 4u);
}

TEST(LoadRun, AMeasuredRunsErrorNamesTheFileAndField) {
  const auto dir = std::filesystem::temp_directory_path() / (std::string("trainsim_gui_load_measured_test_") + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "RUN.json") << R"({"format": "trainsim-measured-run", "version": 1, "tool": "x",
    "device": {"name": "NVIDIA H100 80GB HBM3", "count": 1},
    "model": {"num_layers": -2, "hidden_size": 768, "num_attention_heads": 12, "seq_length": 1024,
              "vocab_size": 50304}})";
  try {
    (void)load_run(dir / "RUN.json");
    FAIL() << "expected a ReadError";
  } catch (const ReadError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("RUN.json"), std::string::npos) << what;
    EXPECT_NE(what.find("num_layers"), std::string::npos) << what;
  }
  std::filesystem::remove_all(dir);
}

void write_text(const std::filesystem::path& path, const std::string& text) {
  report::write_atomically_gz(path, [&](std::ostream& os) { os << text; });  // gzip when the name ends in .gz
}

void expect_same_spans(const TimelineData& a, const TimelineData& b) {
  ASSERT_EQ(a.lanes.size(), b.lanes.size());
  for (std::size_t l = 0; l < a.lanes.size(); ++l) {
    ASSERT_EQ(a.lanes[l].spans.size(), b.lanes[l].spans.size());
    for (std::size_t i = 0; i < a.lanes[l].spans.size(); ++i) {
      const Span& x = a.lanes[l].spans[i];
      const Span& y = b.lanes[l].spans[i];
      EXPECT_EQ(a.name_of(x), b.name_of(y));
      EXPECT_EQ(x.start, y.start);
      EXPECT_EQ(x.end, y.end);
      EXPECT_EQ(x.category, y.category);
    }
  }
  ASSERT_EQ(a.counters.size(), b.counters.size());
  for (std::size_t c = 0; c < a.counters.size(); ++c) EXPECT_EQ(a.counters[c].points, b.counters[c].points);
}

TEST(GzipTimeline, TheSimulatorsGzippedTimelineReadsBackSpanForSpan) {
  const auto dir = std::filesystem::temp_directory_path() / (std::string("trainsim_gui_gzip_test_") + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const config::Scenario s =
      scenario::read_scenario_file(TRAINSIM_SOURCE_DIR "/scenarios/gpt2-124m-1xh100.json");
  const exec::SimulationOutput out = exec::simulate(s);
  report::write_timeline(dir / "r.timeline.json", s, out);
  report::write_timeline(dir / "r.timeline.json.gz", s, out);
  const std::string plain = read_text_file(dir / "r.timeline.json");
  // The file on disk is gzip (magic 1f 8b) and smaller; inflated, it is the plain file byte for byte.
  std::ifstream raw(dir / "r.timeline.json.gz", std::ios::binary);
  ASSERT_EQ(raw.get(), 0x1f);
  ASSERT_EQ(raw.get(), 0x8b);
  EXPECT_LT(std::filesystem::file_size(dir / "r.timeline.json.gz"), plain.size() / 4);
  EXPECT_EQ(read_text_file(dir / "r.timeline.json.gz"), plain);
  const TimelineData a = read_timeline_file(dir / "r.timeline.json");
  const TimelineData b = read_timeline_file(dir / "r.timeline.json.gz");
  EXPECT_EQ(b.span_count(), out.timeline.spans.size());
  expect_same_spans(a, b);
  // Written twice, the same bytes (no time stamp in the gzip header).
  const std::string first = [&] {
    std::ifstream in(dir / "r.timeline.json.gz", std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }();
  report::write_timeline(dir / "r.timeline.json.gz", s, out);
  std::ifstream again(dir / "r.timeline.json.gz", std::ios::binary);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(again), {}), first);
  std::filesystem::remove_all(dir);
}

TEST(GzipTimeline, CorruptAndTruncatedFilesNameTheFileAndTheProblem) {
  const auto dir = std::filesystem::temp_directory_path() / (std::string("trainsim_gui_gzip_corrupt_test_") + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  write_text(dir / "t.json.gz", testing::two_node_timeline());
  std::string bytes;
  {
    std::ifstream in(dir / "t.json.gz", std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  const auto expect_error = [&](const std::string& name, const std::string& content, const std::string& what) {
    std::ofstream(dir / name, std::ios::binary) << content;
    try {
      (void)read_timeline_file(dir / name);
      ADD_FAILURE() << name << " was read";
    } catch (const ReadError& e) {
      const std::string message = e.what();
      EXPECT_NE(message.find((dir / name).string()), std::string::npos) << message;
      EXPECT_NE(message.find(what), std::string::npos) << message;
    }
  };
  expect_error("truncated.json.gz", bytes.substr(0, bytes.size() / 2), "truncated gzip data");
  expect_error("no-trailer.json.gz", bytes.substr(0, bytes.size() - 4), "truncated gzip data");
  std::string flipped = bytes;
  flipped[flipped.size() - 6] = static_cast<char>(flipped[flipped.size() - 6] ^ 0x5a);  // inside the CRC-32
  expect_error("crc.json.gz", flipped, "corrupt gzip data (zlib: incorrect data check)");
  expect_error("garbage.json.gz", bytes.substr(0, 2) + std::string(40, 'x'), "corrupt gzip data");
  std::filesystem::remove_all(dir);
}

TEST(LoadRun, OpensGzippedTimelinesAndTheRunTimelineTheResultNames) {
  const auto dir = std::filesystem::temp_directory_path() / (std::string("trainsim_gui_load_run_gz_test_") + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  write_text(dir / "r.timeline.json.gz", testing::two_node_timeline());
  write_text(dir / "r.run_timeline.json.gz", testing::one_day_run_timeline());
  write_text(dir / "r.json", R"({"scenario": "two nodes", "num_gpus": 2, "iteration_time_s": 2.0,
    "tokens_per_s": 1000.0, "model_flops_per_iteration": 1e13, "tflops_per_gpu": 2.5, "mfu": 0.25,
    "reliability": {"goodput": 0.9, "run_timeline": "r.run_timeline.json.gz"}, "timeline": "r.timeline.json.gz"})");
  const gui::Run run = load_run(dir / "r.json");
  EXPECT_EQ(run.timeline->span_count(), 5u);
  ASSERT_NE(run.run_timeline, nullptr);
  ASSERT_EQ(run.run_timeline->lanes.size(), 1u);
  EXPECT_EQ(run.run_timeline->lanes[0].rank, -1);
  EXPECT_EQ(run.run_timeline->span_count(), 4u);
  EXPECT_DOUBLE_EQ(run.run_timeline->t_end, 86400.0);
  // A gzipped timeline opened alone.
  EXPECT_EQ(load_run(dir / "r.timeline.json.gz").timeline->span_count(), 5u);
  std::filesystem::remove(dir / "r.run_timeline.json.gz");
  EXPECT_THROW((void)load_run(dir / "r.json"), ReadError);  // it names a file that is not there
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace trainsim::gui
