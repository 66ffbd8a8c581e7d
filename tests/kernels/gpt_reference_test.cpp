// The CPU fp64 reference GPT-2 (kernels/reference/gpt_ref.h): its gradients against
// central finite differences, its loss at initialization against ln(V), and the layout
// against the closed-form parameter count.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <numbers>
#include <vector>

#include "gpt_layout.h"
#include "gpt_ref.h"

namespace trainsim::kernels::ref {
namespace {

// 2 layers, hidden 16, 2 heads (head_dim 8), seq 8, vocab 32 padded to 64.
GptConfig tiny() { return GptConfig{2, 16, 2, 8, 32, 64}; }

std::vector<int> tokens_for(const GptConfig& c, int batch, std::uint64_t seed) {
  SplitMix64 rng{seed};
  std::vector<int> t(static_cast<std::size_t>(batch * c.seq));
  for (int& x : t) x = static_cast<int>(rng.next() % static_cast<std::uint64_t>(c.vocab));
  return t;
}

TEST(GptLayout, ParameterCountIsTheClosedForm) {
  // Vp C + T C + L (12 C^2 + 13 C) + 2 C  (GPT-2: 4C^2+... per block: qkv 3C^2+3C, proj C^2+C,
  // fc 4C^2+4C, fcproj 4C^2+C, two layernorms 4C).
  const GptConfig c = tiny();
  const std::size_t C = 16;
  EXPECT_EQ(gpt_layout(c).total, 64 * C + 8 * C + 2 * (12 * C * C + 13 * C) + 2 * C);
  // GPT-2 small with V = 50257 padded to 50304: 124,475,904 parameters (llm.c's count).
  const GptConfig small{12, 768, 12, 1024, 50257, pad_vocab(50257, 128)};
  EXPECT_EQ(small.padded_vocab, 50304);
  EXPECT_EQ(gpt_layout(small).total, 124475904u);
  std::size_t sum = 0;
  for (const ParamTensor& t : gpt_tensors(c)) {
    EXPECT_EQ(t.offset, sum) << t.name;
    sum += t.count;
  }
  EXPECT_EQ(sum, gpt_layout(c).total);
}

TEST(GptLayout, RejectsBadShapes) {
  EXPECT_THROW((void)gpt_layout(GptConfig{2, 16, 3, 8, 32, 64}), std::invalid_argument);  // 16 % 3
  EXPECT_THROW((void)gpt_layout(GptConfig{2, 16, 2, 8, 65, 64}), std::invalid_argument);  // Vp < V
  EXPECT_THROW((void)gpt_layout(GptConfig{0, 16, 2, 8, 32, 64}), std::invalid_argument);
}

// gpt_init as one sequential pass over one splitmix64 stream (the definition; gpt_init
// fills large tensors on several threads and must give these exact values).
std::vector<float> sequential_init(const GptConfig& c, std::uint64_t seed) {
  const GptLayout l = gpt_layout(c);
  std::vector<float> p(l.total, 0.0f);
  SplitMix64 rng{seed};
  const auto normal = [&](std::size_t off, std::size_t n, double sd) {
    for (std::size_t i = 0; i < n; ++i) {
      const double u1 = rng.uniform(), u2 = rng.uniform();
      p[off + i] = static_cast<float>(sd * std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2));
    }
  };
  const auto C = static_cast<std::size_t>(c.hidden), F = static_cast<std::size_t>(c.ffn());
  const double residual_sd = 0.02 / std::sqrt(2.0 * c.layers);
  normal(l.wte, static_cast<std::size_t>(c.vocab) * C, 0.02);
  normal(l.wpe, static_cast<std::size_t>(c.seq) * C, 0.02);
  for (const LayerOffsets& o : l.layer) {
    std::fill_n(p.begin() + static_cast<std::ptrdiff_t>(o.ln1_w), C, 1.0f);
    normal(o.qkv_w, 3 * C * C, 0.02);
    normal(o.proj_w, C * C, residual_sd);
    std::fill_n(p.begin() + static_cast<std::ptrdiff_t>(o.ln2_w), C, 1.0f);
    normal(o.fc_w, F * C, 0.02);
    normal(o.fcproj_w, C * F, residual_sd);
  }
  std::fill_n(p.begin() + static_cast<std::ptrdiff_t>(l.lnf_w), C, 1.0f);
  return p;
}

TEST(GptReference, InitIsOneSequentialStreamWhateverTheThreads) {
  // wte of 16400 x 128 = 2,099,200 deviates >= 2 x 2^20: split over two threads (2^20 or
  // more each) when the machine has two cores or more; padding rows 16400..16511 stay 0.
  const GptConfig c{2, 128, 2, 16, 16400, 16512};
  const std::vector<float> got = gpt_init(c, 99), want = sequential_init(c, 99);
  ASSERT_EQ(got.size(), want.size());
  std::size_t differ = 0;
  for (std::size_t i = 0; i < got.size(); ++i) differ += std::memcmp(&got[i], &want[i], sizeof(float)) != 0;
  EXPECT_EQ(differ, 0u);
  EXPECT_EQ(got[gpt_layout(c).wte + 16400 * 128], 0.0f);
}

TEST(GptReference, LossAtInitIsCloseToLnV) {
  // Logits are LNf(x) . wte_v with unit-variance LNf(x) and wte ~ N(0, 0.02^2): each logit has
  // variance s^2 = C 0.02^2 = 0.0064, and E[loss] ~ ln V + s^2/2 = 3.4657 + 0.0032.
  const GptConfig c = tiny();
  const std::vector<float> p32 = gpt_init(c, 1);
  const std::vector<double> p(p32.begin(), p32.end());
  const int batch = 4;
  const auto r = gpt_forward_backward(c, p, tokens_for(c, batch, 2), tokens_for(c, batch, 3), batch, false);
  EXPECT_NEAR(r.loss, std::log(32.0) + 0.0032, 0.02);
}

TEST(GptReference, GradientsMatchCentralDifferences) {
  const GptConfig c = tiny();
  const std::vector<float> p32 = gpt_init(c, 7);
  std::vector<double> p(p32.begin(), p32.end());
  // Larger weights than at init, so every path (attention scores, GELU curvature) matters.
  SplitMix64 rng{11};
  for (double& x : p) x += 0.2 * (rng.uniform() - 0.5);
  const GptLayout layout = gpt_layout(c);
  // Padding rows of wte must stay padding: zero them again (their gradient is exactly 0).
  for (std::size_t i = layout.wte + 32 * 16; i < layout.wte + 64 * 16; ++i) p[i] = 0.0;
  const int batch = 2;
  const std::vector<int> tokens = tokens_for(c, batch, 5), targets = tokens_for(c, batch, 6);
  const auto r = gpt_forward_backward(c, p, tokens, targets, batch, true);
  ASSERT_EQ(r.grads.size(), p.size());
  const double h = 1e-5;
  int checked = 0;
  // Every tensor: its first 8 entries and every 13th after (about 900 of the 7,808).
  for (const ParamTensor& t : gpt_tensors(c)) {
    for (std::size_t j = 0; j < t.count; j += (j < 8 ? 1 : 13)) {
      const std::size_t i = t.offset + j;
      const double saved = p[i];
      p[i] = saved + h;
      const double up = gpt_forward_backward(c, p, tokens, targets, batch, false).loss;
      p[i] = saved - h;
      const double down = gpt_forward_backward(c, p, tokens, targets, batch, false).loss;
      p[i] = saved;
      const double fd = (up - down) / (2.0 * h);
      // Central differences: truncation ~h^2 |f'''| and rounding ~1e-16/h, both < 1e-9 here.
      EXPECT_NEAR(r.grads[i], fd, 1e-8 + 1e-6 * std::abs(fd)) << t.name << "[" << j << "]";
      ++checked;
    }
  }
  EXPECT_GT(checked, 800);
  // Padding rows of wte get no gradient: their logits are outside the loss.
  for (std::size_t i = layout.wte + 32 * 16; i < layout.wte + 64 * 16; ++i) EXPECT_EQ(r.grads[i], 0.0);
}

}  // namespace
}  // namespace trainsim::kernels::ref
