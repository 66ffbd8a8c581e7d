// The timeline file's one writer (sim/io/timeline_format.h) and its number
// text (sim/io/json_text.h): numbers written as fmt's "{}" writes them, so the
// simulator's files keep their bytes while the trainer, which has no fmt on
// the GPU machine, writes the same text; and the document's layout, by hand.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <fmt/format.h>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/rng.h"
#include "io/json_text.h"
#include "io/timeline_format.h"

namespace trainsim::io {
namespace {

TEST(JsonNumber, WritesWhatFmtWrites) {
  for (const double v : {0.0, -0.0, 1.0, -1.0, 0.5, 0.1, 1e-4, 9.999e-5, 1e-5, 1.5e-7, 123.456, 1e15, 4e12,
                         9.999999999999998e15, 1e16, 1.2345678901234568e17, 1e100, 5e-324,
                         std::numeric_limits<double>::max(), 3221225472000.0, 0.30000000000000004, 2.0 / 3.0})
    EXPECT_EQ(json_number(v), fmt::format("{}", v)) << fmt::format("{:a}", v);
  // Random bit patterns (every exponent) and random magnitudes of the kind a
  // timeline holds (FLOPs, bytes, fractions).
  core::Rng rng(7);
  for (int i = 0; i < 200000; ++i) {
    const std::uint64_t bits = (rng.below(1ULL << 32) << 32) | rng.below(1ULL << 32);
    const double v = std::bit_cast<double>(bits);
    if (!std::isfinite(v)) continue;
    ASSERT_EQ(json_number(v), fmt::format("{}", v)) << fmt::format("{:a}", v);
    const double scaled = std::ldexp(static_cast<double>(rng.below(1ULL << 40)), static_cast<int>(rng.below(80)) - 40);
    ASSERT_EQ(json_number(scaled), fmt::format("{}", scaled)) << fmt::format("{:a}", scaled);
  }
}

TEST(JsonText, SecondsAndStrings) {
  EXPECT_EQ(seconds_text(0), "0.000000000");
  EXPECT_EQ(seconds_text(1'500'000'001), "1.500000001");
  EXPECT_EQ(seconds_text(42), "0.000000042");
  EXPECT_EQ(json_string("a\"b\\c\n\x01"), "\"a\\\"b\\\\c\\n\\u0001\"");
}

TEST(TimelineWriter, WritesTheDocumentLayout) {
  timeline::Header h;
  h.scenario = "two \"GPUs\"";
  h.num_gpus = 2;
  h.gpus_per_node = 1;
  h.node_of_rank = {0, 1};
  h.replicas = {{0, "0-1"}};
  std::ostringstream os;
  timeline::Writer w(os, h);
  w.lane(0, "compute");
  timeline::Span s;
  s.rank = 0;
  s.stream = "compute";
  s.category = "forward";
  s.name = "layer0.mlp_up";
  s.start_ns = 1'000;
  s.end_ns = 2'000'000'500;
  s.flops = 4e12;
  s.bytes = 1.5e6;
  s.iteration = 0;
  s.microbatch = 3;
  s.layer = 0;
  w.span(s);
  timeline::Span bare;  // a span with only the required keys
  bare.rank = 0;
  bare.stream = "compute";
  bare.category = "optimizer";
  bare.name = "step";
  bare.start_ns = 3;
  bare.end_ns = 4;
  w.span(bare);
  w.counter("memory", "bytes", {{0, 1.0}, {1'000, 2.5}});
  w.finish();
  EXPECT_EQ(os.str(),
            "{\n\"format\": \"trainsim-timeline\",\n\"version\": 1,\n\"scenario\": \"two \\\"GPUs\\\"\",\n"
            "\"num_gpus\": 2,\n\"gpus_per_node\": 1,\n\"time_unit\": \"s\",\n\"node_of_rank\": [0,1],\n"
            "\"replicas\": [{\"representative\": 0, \"ranks\": \"0-1\"}],\n\"lanes\": [\n"
            "{\"rank\": 0, \"stream\": \"compute\", \"spans\": [\n"
            "{\"rank\": 0, \"stream\": \"compute\", \"category\": \"forward\", \"name\": \"layer0.mlp_up\", "
            "\"start\": 0.000001000, \"end\": 2.000000500, \"flops\": 4000000000000, \"bytes\": 1500000, "
            "\"iteration\": 0, \"microbatch\": 3, \"layer\": 0},\n"
            "{\"rank\": 0, \"stream\": \"compute\", \"category\": \"optimizer\", \"name\": \"step\", "
            "\"start\": 0.000000003, \"end\": 0.000000004}]}\n],\n"
            "\"counters\": [\n{\"name\": \"memory\", \"unit\": \"bytes\", \"points\": [[0.000000000,1],"
            "[0.000001000,2.5]]}\n]\n}\n");
  EXPECT_EQ(nlohmann::json::parse(os.str())["lanes"][0]["spans"].size(), 2u);
}

TEST(TimelineWriter, NoLanesNoCounters) {
  timeline::Header h;
  h.scenario = "empty";
  h.full_run = "{\"trial\": 0, \"seed\": 1}";
  std::ostringstream os;
  timeline::Writer w(os, h);
  w.finish();
  const auto j = nlohmann::json::parse(os.str());
  EXPECT_EQ(j["format"], "trainsim-timeline");
  EXPECT_EQ(j["full_run"]["seed"], 1);
  EXPECT_TRUE(j["lanes"].empty());
  EXPECT_TRUE(j["counters"].empty());
}

}  // namespace
}  // namespace trainsim::io
