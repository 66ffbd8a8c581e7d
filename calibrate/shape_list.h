#pragma once
// Lists of exact GEMM shapes to measure: read from a JSON file, or derived from a
// scenario's operations (`--for`, in builds that include the simulator).
#include <string>
#include <tuple>
#include <vector>

#include "trainsim/kernels/gemm_layout.h"

namespace trainsim::calibrate {

// One GEMM to time: C[m x n], reduction over k, in one of the wrapper's layouts
// (kernels/include/trainsim/kernels/gemm.h).
struct GemmShape {
  long long m = 0, n = 0, k = 0;
  kernels::GemmLayout layout = kernels::GemmLayout::kForward;
  bool operator<(const GemmShape& o) const { return std::tie(layout, m, n, k) < std::tie(o.layout, o.m, o.n, o.k); }
  bool operator==(const GemmShape& o) const = default;
};

// [{"m": 8192, "n": 2304, "k": 768}, {"m": 8192, "n": 768, "k": 2304, "layout":
// "data_gradient"}, ...] ("layout" optional, default forward); errors name the file,
// the entry and the field.
[[nodiscard]] std::vector<GemmShape> read_shape_list(const std::string& path);
[[nodiscard]] std::vector<GemmShape> parse_shape_list(const std::string& text, const std::string& source);

// The shapes in the forward layout, as fp8 runs them (Hopper's fp8 GEMMs are TN only;
// Transformer Engine transposes its operands with fp8_cast_transpose instead): a data
// gradient's (m, n, k) as is, a weight gradient's as its transpose C^T, (n, m, k), the
// forward rows the simulator prices a backward GEMM with where it has no layout rows;
// sorted, without repeats.
[[nodiscard]] std::vector<GemmShape> forward_only(const std::vector<GemmShape>& shapes);

// nccl-tests sizes: "8", "512K", "1M", "4G" (powers of 1024).
[[nodiscard]] double parse_bytes(const std::string& text);

// The distinct GEMM shapes (forward, data gradient, weight gradient) one iteration of
// the scenario runs on one GPU, written beside `profile` as PROFILE.shapes.json;
// returns that path. Throws where this build has no simulator.
[[nodiscard]] std::string write_scenario_shapes(const std::string& scenario, const std::string& profile);
// The GEMM dtype of the scenario's training precision.
[[nodiscard]] std::string scenario_gemm_dtype(const std::string& scenario);

}  // namespace trainsim::calibrate
