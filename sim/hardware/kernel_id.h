#pragma once
// Which of our measured kernels an op is (docs/calibration.md, "kernels"): the key
// under which a calibration profile holds its measured times. A small enum, not a
// string: it rides in every KernelWork, and task graphs copy those a lot.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace trainsim::hw {

enum class KernelId : std::uint8_t {
  kNone,  // no measured kernel does this op's work: the roofline prices it
  kEmbeddingForward,
  kEmbeddingBackward,
  kLayernormForward,
  kLayernormBackward,
  kGeluForward,
  kGeluBackward,
  kResidualForward,
  kSoftmaxCrossEntropy,
  kAdamw,
  kAttentionForward,
  kAttentionBackward,
  // PyTorch's scaled_dot_product_attention as the framework runs it (cuDNN or
  // flash backend), measured by scripts/pytorch-attention-reference.py: the
  // attention of a PyTorch eager step (training.framework "pytorch_eager").
  kSdpaForward,
  kSdpaBackward,
};
inline constexpr std::size_t kNumKernelIds = 14;
static_assert(static_cast<std::size_t>(KernelId::kSdpaBackward) + 1 == kNumKernelIds);

// The profile's names: "layernorm_forward", ...; kNone is "none".
std::string_view to_string(KernelId k);
// Only the names of measured kernels (never "none").
std::optional<KernelId> kernel_id_from_string(std::string_view s);

[[nodiscard]] constexpr bool is_attention(KernelId k) {
  return k == KernelId::kAttentionForward || k == KernelId::kAttentionBackward || k == KernelId::kSdpaForward ||
         k == KernelId::kSdpaBackward;
}

[[nodiscard]] constexpr bool is_backward_attention(KernelId k) {
  return k == KernelId::kAttentionBackward || k == KernelId::kSdpaBackward;
}

}  // namespace trainsim::hw
