#pragma once
// The kernel classes of a measured-run file (docs/validation.md, "Measured run
// file"), in file order: one list for its writer (trainsim-train) and its readers
// (trainsim validate). Header-only and dependency-free, so the trainer's GPU-only
// build can include it.
#include <array>
#include <string_view>

namespace trainsim::config {

inline constexpr std::array<std::string_view, 10> kKernelClasses = {
    "gemm",     "attention",             "layernorm", "gelu",       "residual",
    "embedding", "softmax_cross_entropy", "optimizer", "all_reduce", "other"};

}  // namespace trainsim::config
