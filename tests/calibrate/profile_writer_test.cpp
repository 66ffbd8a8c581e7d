// The harness's CPU pieces: shape lists, nccl-tests sizes, and the profile writer
// (written at construction with "complete": false, complete only after finish()).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <unistd.h>

#include "profile_writer.h"
#include "shape_list.h"

namespace {

using namespace trainsim::calibrate;
namespace fs = std::filesystem;

nlohmann::json read_json(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return nlohmann::json::parse(ss.str());
}

TEST(ShapeList, ParsesShapes) {
  const auto shapes = parse_shape_list(R"([{"m": 8192, "n": 2304, "k": 768}, {"m": 1, "n": 2, "k": 3}])", "s.json");
  ASSERT_EQ(shapes.size(), 2u);
  EXPECT_EQ(shapes[0], (GemmShape{8192, 2304, 768}));
  EXPECT_EQ(shapes[1], (GemmShape{1, 2, 3}));
}

TEST(ShapeList, ReadsLayouts) {
  using trainsim::kernels::GemmLayout;
  const auto shapes = parse_shape_list(
      R"([{"m": 8192, "n": 768, "k": 2304, "layout": "data_gradient"},
          {"m": 2304, "n": 768, "k": 8192, "layout": "weight_gradient"}, {"m": 8, "n": 8, "k": 8, "layout": "forward"}])",
      "s.json");
  ASSERT_EQ(shapes.size(), 3u);
  EXPECT_EQ(shapes[0], (GemmShape{8192, 768, 2304, GemmLayout::kDataGradient}));
  EXPECT_EQ(shapes[1], (GemmShape{2304, 768, 8192, GemmLayout::kWeightGradient}));
  EXPECT_EQ(shapes[2], (GemmShape{8, 8, 8}));
  try {
    (void)parse_shape_list(R"([{"m": 8, "n": 8, "k": 8, "layout": "nt"}])", "s.json");
    FAIL() << "accepted an unknown layout";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(),
                 "s.json: [0].layout: unknown GEMM layout 'nt' (expected forward, data_gradient or weight_gradient)");
  }
  EXPECT_THROW((void)parse_shape_list(R"([{"m": 8, "n": 8, "k": 8, "layout": 1}])", "s.json"), std::runtime_error);
}

// fp8 runs every GEMM in the forward layout: the data gradient (m, n, k) as is, the
// weight gradient as its transpose (n, m, k); repeats once.
TEST(ShapeList, Fp8ShapesInTheForwardLayout) {
  using trainsim::kernels::GemmLayout;
  const std::vector<GemmShape> fwd = forward_only({{8192, 768, 2304, GemmLayout::kDataGradient},
                                                   {2304, 768, 8192, GemmLayout::kWeightGradient},
                                                   {768, 2304, 8192, GemmLayout::kForward},
                                                   {8192, 768, 2304, GemmLayout::kForward}});
  ASSERT_EQ(fwd.size(), 2u);
  EXPECT_EQ(fwd[0], (GemmShape{768, 2304, 8192}));
  EXPECT_EQ(fwd[1], (GemmShape{8192, 768, 2304}));
}

TEST(ShapeList, ErrorsNameTheFileEntryAndField) {
  try {
    (void)parse_shape_list(R"([{"m": 8, "n": 8, "k": 8}, {"m": 8, "n": -4, "k": 8}])", "s.json");
    FAIL() << "accepted a negative size";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "s.json: [1].n: expected a positive integer below 2^31, got -4");
  }
  EXPECT_THROW((void)parse_shape_list(R"([{"m": 8, "k": 8}])", "s.json"), std::runtime_error);
  EXPECT_THROW((void)parse_shape_list("{", "s.json"), std::runtime_error);
  EXPECT_THROW((void)parse_shape_list(R"({"m": 8})", "s.json"), std::runtime_error);
}

TEST(ParseBytes, NcclTestsSuffixes) {
  EXPECT_EQ(parse_bytes("8"), 8.0);
  EXPECT_EQ(parse_bytes("512K"), 512.0 * 1024);
  EXPECT_EQ(parse_bytes("1M"), 1024.0 * 1024);
  EXPECT_EQ(parse_bytes("4G"), 4.0 * 1024 * 1024 * 1024);
  EXPECT_THROW((void)parse_bytes("4X"), std::invalid_argument);
  EXPECT_THROW((void)parse_bytes("-1"), std::invalid_argument);
  EXPECT_THROW((void)parse_bytes("big"), std::invalid_argument);
}

TEST(ProfileWriter, IncompleteUntilFinished) {
  const fs::path dir = fs::temp_directory_path() / ("trainsim_profile_writer_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path out = dir / "p.json";
  {
    ProfileWriter w(out, {{"device", {{"name", "test"}}}});
    // Written at once, so an interrupted run leaves a readable, incomplete profile.
    nlohmann::json j = read_json(out);
    EXPECT_EQ(j["complete"], false);
    EXPECT_EQ(j["trainsim_calibration"], 1);
    w.add("gemm", {{"dtype", "bf16"}, {"m", 1}, {"n", 1}, {"k", 1}, {"seconds", 1e-6}});
    w.flush();
    j = read_json(out);
    EXPECT_EQ(j["gemm"].size(), 1u);
    EXPECT_EQ(j["complete"], false);
    w.finish();
  }
  const nlohmann::json j = read_json(out);
  EXPECT_EQ(j["complete"], true);
  EXPECT_EQ(j["device"]["name"], "test");
  // No temporary file is left beside it.
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator{}), 1);
  fs::remove_all(dir);
}

}  // namespace
