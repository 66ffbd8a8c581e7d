#pragma once
// Lists of exact GEMM shapes to measure: read from a JSON file, or derived from a
// scenario's operations (`--for`, in builds that include the simulator).
#include <string>
#include <vector>

namespace trainsim::calibrate {

struct GemmShape {
  long long m = 0, n = 0, k = 0;
  bool operator<(const GemmShape& o) const { return m != o.m ? m < o.m : n != o.n ? n < o.n : k < o.k; }
  bool operator==(const GemmShape& o) const = default;
};

// [{"m": 8192, "n": 2304, "k": 768}, ...]; errors name the file, the entry and the field.
[[nodiscard]] std::vector<GemmShape> read_shape_list(const std::string& path);
[[nodiscard]] std::vector<GemmShape> parse_shape_list(const std::string& text, const std::string& source);

// nccl-tests sizes: "8", "512K", "1M", "4G" (powers of 1024).
[[nodiscard]] double parse_bytes(const std::string& text);

// The distinct GEMM shapes (forward, data gradient, weight gradient) one iteration of
// the scenario runs on one GPU, written beside `profile` as PROFILE.shapes.json;
// returns that path. Throws where this build has no simulator.
[[nodiscard]] std::string write_scenario_shapes(const std::string& scenario, const std::string& profile);
// The GEMM dtype of the scenario's training precision.
[[nodiscard]] std::string scenario_gemm_dtype(const std::string& scenario);

}  // namespace trainsim::calibrate
