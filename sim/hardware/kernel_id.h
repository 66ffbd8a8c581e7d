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
  // flash backend), measured by scripts/pytorch-kernel-reference.py: the
  // attention of a PyTorch eager step (training.framework "pytorch_eager").
  kSdpaForward,
  kSdpaBackward,
  // PyTorch's own memory-bound kernels, as a PyTorch eager step under bf16
  // autocast runs them (scripts/pytorch-kernel-reference.py measures them; docs/
  // calibration.md): fp32 layer norm (the backward: input gradient plus gamma and
  // beta), tanh GELU in bf16, an fp32 + bf16 add, an fp32 <-> bf16 cast, a fill,
  // a column sum over rows (bias gradients), a cat, fp32 log_softmax over
  // vocabulary-wide rows, and fused AdamW.
  kTorchLayernormForward,
  kTorchLayernormBackward,
  kTorchGeluForward,
  kTorchGeluBackward,
  kTorchAdd,
  kTorchCast,
  kTorchFill,
  kTorchSumRows,
  kTorchCat,
  kTorchLogSoftmaxForward,
  kTorchLogSoftmaxBackward,
  kTorchAdamw,
  // Transformer Engine-style FP8 casts with per-tensor scale and amax (kernels/
  // include/trainsim/kernels/fp8.h): bf16 in, fp8 out, and the cast with its transpose.
  kFp8Cast,
  kFp8CastTranspose,
  // A mixture-of-experts layer's token permutation before the experts and its
  // inverse after them (Transformer Engine's fused moe_permute / moe_unpermute, as
  // Megatron-Core runs them with moe_permute_fusion); each one's backward is the
  // other.
  kMoePermute,
  kMoeUnpermute,
};
inline constexpr std::size_t kNumKernelIds = 30;
static_assert(static_cast<std::size_t>(KernelId::kMoeUnpermute) + 1 == kNumKernelIds);

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

// The kernel of ours that does the same work as one of PyTorch's: what prices it,
// as a stand-in, when a profile has no rows of PyTorch's kernel (docs/model.md,
// "Calibrated costs"). Nothing for a kernel we have no counterpart of (a cast, a
// fill, a reduction, a cat): the roofline fallback prices those.
[[nodiscard]] constexpr std::optional<KernelId> stand_in_for(KernelId k) {
  switch (k) {
    case KernelId::kSdpaForward: return KernelId::kAttentionForward;
    case KernelId::kSdpaBackward: return KernelId::kAttentionBackward;
    case KernelId::kTorchLayernormForward: return KernelId::kLayernormForward;
    case KernelId::kTorchLayernormBackward: return KernelId::kLayernormBackward;
    case KernelId::kTorchGeluForward: return KernelId::kGeluForward;
    case KernelId::kTorchGeluBackward: return KernelId::kGeluBackward;
    case KernelId::kTorchAdd: return KernelId::kResidualForward;
    case KernelId::kTorchLogSoftmaxForward:
    case KernelId::kTorchLogSoftmaxBackward: return KernelId::kSoftmaxCrossEntropy;
    case KernelId::kTorchAdamw: return KernelId::kAdamw;
    default: return std::nullopt;
  }
}

}  // namespace trainsim::hw
