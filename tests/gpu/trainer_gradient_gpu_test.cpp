// trainsim-train's GPU model (kernels/trainer/gpt_model.h) against the CPU fp64 reference
// GPT-2 (kernels/reference/gpt_ref.h) on a tiny model: the loss and every parameter
// tensor's gradient after one forward and backward.
//
// Tolerances (bf16): the GPU keeps activations, the residual-stream gradient and dX in bf16
// (8 significant bits, relative rounding 2^-9 = 0.2% per store) through 2 layers of about
// 10 stores each, and accumulates weight gradients in fp32; the reference sees the same
// bf16-rounded weights. So the loss agrees to 0.01 (absolute, at about ln 256 = 5.5) and each
// tensor's gradient to 5% in relative L2 norm (|g - g_ref| / |g_ref|); the observed errors
// are printed.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "gpt_layout.h"
#include "gpt_model.h"
#include "gpt_ref.h"
#include "gpu_available.h"

namespace trainsim::trainer {
namespace {

float round_to_bf16(float x) {  // round to nearest even, as __float2bfloat16_rn
  std::uint32_t bits = 0;
  std::memcpy(&bits, &x, sizeof bits);
  bits += 0x7FFFu + ((bits >> 16) & 1u);
  bits &= 0xFFFF0000u;
  float y = 0.0f;
  std::memcpy(&y, &bits, sizeof y);
  return y;
}

TEST(TrainerGradient, TinyModelMatchesTheFp64Reference) {
  TRAINSIM_REQUIRE_GPU();
  // 2 layers, hidden 128, 2 heads of 64 (the flash kernels' head_dim), seq 64, vocab 256.
  const kernels::ref::GptConfig cfg{2, 128, 2, 64, 256, 256};
  const int B = 2;
  const std::size_t N = static_cast<std::size_t>(B * cfg.seq);
  std::vector<float> master = kernels::ref::gpt_init(cfg, 5);
  kernels::ref::SplitMix64 rng{17};
  for (float& x : master) x += static_cast<float>(0.04 * (rng.uniform() - 0.5));  // non-zero biases too
  std::vector<int> tokens(N), targets(N);
  for (std::size_t i = 0; i < N; ++i) {
    tokens[i] = static_cast<int>(rng.next() % 256);
    targets[i] = static_cast<int>(rng.next() % 256);
  }

  GpuModel model(cfg, B, 1, 0, 0);
  model.recorder().set_enabled(false);
  const std::vector<float> zeros(master.size(), 0.0f);
  model.load_state(master, zeros, zeros);
  model.zero_grads();
  model.upload_batch(0, tokens, targets);
  model.forward(0, 1.0f / static_cast<float>(N));
  model.backward_head(0);
  for (int l = cfg.layers - 1; l >= 0; --l) model.backward_layer(0, l);
  model.backward_embedding(0);
  const std::vector<float> grads = model.download_grads();
  double gpu_loss = 0.0;
  for (const float x : model.download_losses(0)) gpu_loss += static_cast<double>(x);
  gpu_loss /= static_cast<double>(N);

  std::vector<double> p(master.size());
  for (std::size_t i = 0; i < p.size(); ++i) p[i] = static_cast<double>(round_to_bf16(master[i]));
  const auto ref = kernels::ref::gpt_forward_backward(cfg, p, tokens, targets, B, true);
  EXPECT_NEAR(gpu_loss, ref.loss, 0.01);
  std::printf("loss: GPU %.6f, fp64 reference %.6f\n", gpu_loss, ref.loss);
  for (const auto& t : kernels::ref::gpt_tensors(cfg)) {
    double diff = 0.0, norm = 0.0;
    for (std::size_t j = t.offset; j < t.offset + t.count; ++j) {
      const double d = static_cast<double>(grads[j]) - ref.grads[j];
      diff += d * d;
      norm += ref.grads[j] * ref.grads[j];
    }
    const double rel = std::sqrt(diff) / std::max(std::sqrt(norm), 1e-12);
    std::printf("%-18s |g_ref| %.3e  relative L2 error %.4f\n", t.name.c_str(), std::sqrt(norm), rel);
    EXPECT_LT(rel, 0.05) << t.name;
  }
}

}  // namespace
}  // namespace trainsim::trainer
