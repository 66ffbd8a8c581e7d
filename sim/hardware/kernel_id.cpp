#include "hardware/kernel_id.h"

#include <array>
#include <utility>

namespace trainsim::hw {

namespace {
constexpr std::array<std::pair<KernelId, std::string_view>, kNumKernelIds> kNames{{
    {KernelId::kNone, "none"},
    {KernelId::kEmbeddingForward, "embedding_forward"},
    {KernelId::kEmbeddingBackward, "embedding_backward"},
    {KernelId::kLayernormForward, "layernorm_forward"},
    {KernelId::kLayernormBackward, "layernorm_backward"},
    {KernelId::kGeluForward, "gelu_forward"},
    {KernelId::kGeluBackward, "gelu_backward"},
    {KernelId::kResidualForward, "residual_forward"},
    {KernelId::kSoftmaxCrossEntropy, "softmax_cross_entropy"},
    {KernelId::kAdamw, "adamw"},
    {KernelId::kAttentionForward, "attention_forward"},
    {KernelId::kAttentionBackward, "attention_backward"},
    {KernelId::kSdpaForward, "sdpa_forward"},
    {KernelId::kSdpaBackward, "sdpa_backward"},
    {KernelId::kTorchLayernormForward, "torch_layernorm_forward"},
    {KernelId::kTorchLayernormBackward, "torch_layernorm_backward"},
    {KernelId::kTorchGeluForward, "torch_gelu_forward"},
    {KernelId::kTorchGeluBackward, "torch_gelu_backward"},
    {KernelId::kTorchAdd, "torch_add"},
    {KernelId::kTorchCast, "torch_cast"},
    {KernelId::kTorchFill, "torch_fill"},
    {KernelId::kTorchSumRows, "torch_sum_rows"},
    {KernelId::kTorchCat, "torch_cat"},
    {KernelId::kTorchLogSoftmaxForward, "torch_log_softmax_forward"},
    {KernelId::kTorchLogSoftmaxBackward, "torch_log_softmax_backward"},
    {KernelId::kTorchAdamw, "torch_adamw"},
    {KernelId::kFp8Cast, "fp8_cast"},
    {KernelId::kFp8CastTranspose, "fp8_cast_transpose"},
    {KernelId::kMoePermute, "moe_permute"},
    {KernelId::kMoeUnpermute, "moe_unpermute"},
}};
}  // namespace

std::string_view to_string(KernelId k) {
  for (const auto& [value, name] : kNames)
    if (value == k) return name;
  return "unknown";
}

std::optional<KernelId> kernel_id_from_string(std::string_view s) {
  for (const auto& [value, name] : kNames)
    if (name == s && value != KernelId::kNone) return value;
  return std::nullopt;
}

}  // namespace trainsim::hw
