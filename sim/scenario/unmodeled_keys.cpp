#include "scenario/unmodeled_keys.h"

#include <array>
#include <string>

#include <fmt/format.h>

namespace trainsim::scenario {

namespace {

constexpr std::array kParallelism{
    UnmodeledKey{"fine_grained_activation_offloading",
                 "Megatron-Core's fine-grained activation offloading moves the saved tensors of the modules listed "
                 "in offload_modules (attention, expert FC1, ...) to host memory, pipeline parallelism allowed",
                 "use cpu_offloading with cpu_offloading_num_layers (whole layers, pipeline_model_parallel_size 1), "
                 "or remove it: the activations then stay on the GPU, an upper bound of the peak memory"},
};

// None at present (enable_cuda_graph is read by parse_training.cpp).
constexpr std::array<UnmodeledKey, 0> kTraining{};

}  // namespace

std::span<const UnmodeledKey> unmodeled_parallelism_keys() { return kParallelism; }
std::span<const UnmodeledKey> unmodeled_training_keys() { return kTraining; }

std::vector<std::string_view> with_unmodeled(std::vector<std::string_view> known,
                                             std::span<const UnmodeledKey> unmodeled) {
  for (const UnmodeledKey& u : unmodeled) known.push_back(u.key);
  return known;
}

void refuse_unmodeled(const ObjectReader& o, std::span<const UnmodeledKey> unmodeled) {
  // false states what trainsim simulates (the switch off) and is accepted.
  for (const UnmodeledKey& u : unmodeled)
    if (o.has_non_null(u.key) && o.raw(u.key) != false)
      o.fail_message(u.key, fmt::format("{} is not modeled yet: {}; {}", u.key, u.meaning, u.instead));
}

}  // namespace trainsim::scenario
