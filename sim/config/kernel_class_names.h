#pragma once
// The kernel classes of a measured-run file (docs/validation.md, "Measured run
// file"), in file order: one list for its writer (trainsim-train) and its readers
// (trainsim validate). Header-only and dependency-free, so the trainer's GPU-only
// build can include it.
#include <array>
#include <cctype>
#include <cstddef>
#include <string>
#include <string_view>

namespace trainsim::config {

inline constexpr std::array<std::string_view, 10> kKernelClasses = {
    "gemm",     "attention",             "layernorm", "gelu",       "residual",
    "embedding", "softmax_cross_entropy", "optimizer", "all_reduce", "other"};

// Index into kKernelClasses of the class named `name`; kKernelClasses.size() for none.
constexpr std::size_t kernel_class_index(std::string_view name) {
  for (std::size_t i = 0; i < kKernelClasses.size(); ++i)
    if (kKernelClasses[i] == name) return i;
  return kKernelClasses.size();
}

// Index into kKernelClasses of the class a GPU kernel's name falls in, by the rules
// scripts/pytorch-gpt-step.py files the PyTorch profiler's kernels by
// (docs/pytorch-traces.md, "The figures"), first match wins; NCCL's kernels are communication
// ("all_reduce", whatever the collective). Case-insensitive.
inline std::size_t kernel_class_of_name(std::string_view kernel) {
  std::string n(kernel);
  for (char& c : n) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const auto has = [&n](std::string_view part) { return n.find(part) != std::string::npos; };
  if (has("nccl")) return kernel_class_index("all_reduce");
  if (has("flash") || has("fmha") || has("attention") || has("sdpa") || (has("cudnn") && has("mha")))
    return kernel_class_index("attention");
  if (has("gemm") || has("cutlass") || has("sm90_xmma") || has("nvjet") || has("cublas") || has("wgmma"))
    return kernel_class_index("gemm");
  if (has("adam") || has("multi_tensor") || has("foreach")) return kernel_class_index("optimizer");
  if (has("layer_norm") || has("layernorm") || has("rms_norm") || has("rmsnorm")) return kernel_class_index("layernorm");
  if (has("softmax") || has("cross_entropy") || has("nll") || has("log_softmax")) return kernel_class_index("softmax_cross_entropy");
  if (has("embedding") || has("index")) return kernel_class_index("embedding");
  if (has("gelu")) return kernel_class_index("gelu");
  return kernel_class_index("other");
}

}  // namespace trainsim::config
