// The CPU references of the elementwise kernels against hand-derived closed forms.
#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <numeric>
#include <random>
#include <stdexcept>
#include <vector>

#include "elementwise_ref.h"

namespace ref = trainsim::kernels::ref;

namespace {

std::vector<float> random_vector(std::size_t n, unsigned seed, float scale = 1.0f, float offset = 0.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(offset, scale);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

double row_mean(const std::vector<float>& v, std::size_t begin, std::size_t n) {
  double s = 0.0;
  for (std::size_t i = 0; i < n; ++i) s += static_cast<double>(v[begin + i]);
  return s / static_cast<double>(n);
}

double row_variance(const std::vector<float>& v, std::size_t begin, std::size_t n) {
  const double mu = row_mean(v, begin, n);
  double s = 0.0;
  for (std::size_t i = 0; i < n; ++i)
    s += (static_cast<double>(v[begin + i]) - mu) * (static_cast<double>(v[begin + i]) - mu);
  return s / static_cast<double>(n);
}

constexpr double kEps = static_cast<double>(ref::kLayerNormEps);

}  // namespace

// ---- embedding ------------------------------------------------------------------------

TEST(EmbeddingReference, ForwardGathersTokenRowPlusPositionRow) {
  const int B = 1, T = 3, C = 2, V = 4;
  const std::vector<int> tokens = {2, 0, 2};
  const std::vector<float> wte = {0, 1, 10, 11, 20, 21, 30, 31};  // row v = (10 v, 10 v + 1)
  const std::vector<float> wpe = {0.5f, 0.25f, 1.5f, 1.25f, 2.5f, 2.25f};
  std::vector<float> out(6);
  ref::embedding_forward(out, tokens, wte, wpe, B, T, C, V);
  EXPECT_EQ(out, (std::vector<float>{20.5f, 21.25f, 1.5f, 2.25f, 22.5f, 23.25f}));
  ref::embedding_forward(out, tokens, wte, {}, B, T, C, V);  // no position embedding
  EXPECT_EQ(out, (std::vector<float>{20, 21, 0, 1, 20, 21}));
}

TEST(EmbeddingReference, BackwardSumsRepeatedTokensAndBatches) {
  const int B = 2, T = 2, C = 1, V = 3;
  const std::vector<int> tokens = {1, 1, 0, 1};  // token 1 at (0,0), (0,1), (1,1); token 2 unused
  const std::vector<float> dout = {1, 2, 4, 8};
  std::vector<float> dwte = {100, 200, 300};  // accumulated into
  std::vector<float> dwpe = {10, 20};
  ref::embedding_backward(dwte, dwpe, dout, tokens, B, T, C, V);
  EXPECT_EQ(dwte, (std::vector<float>{100 + 4, 200 + 1 + 2 + 8, 300}));
  EXPECT_EQ(dwpe, (std::vector<float>{10 + 1 + 4, 20 + 2 + 8}));
}

TEST(EmbeddingReference, RejectsTokensOutsideTheVocabulary) {
  std::vector<float> out(2);
  const std::vector<float> wte(4);
  EXPECT_THROW(ref::embedding_forward(out, std::vector<int>{2}, wte, {}, 1, 1, 2, 2), std::invalid_argument);
  EXPECT_THROW(ref::embedding_forward(out, std::vector<int>{-1}, wte, {}, 1, 1, 2, 2), std::invalid_argument);
  EXPECT_THROW(ref::embedding_forward(out, std::vector<int>{0}, wte, {}, 1, 1, 3, 2), std::invalid_argument);
}

// ---- layernorm ------------------------------------------------------------------------

TEST(LayerNormReference, SmallRowByHand) {
  // x = (1, 2, 3, 4): mean 2.5, biased variance 1.25.
  const std::vector<float> x = {1, 2, 3, 4};
  const std::vector<float> w = {1, 1, 1, 1};
  const std::vector<float> b = {0, 0, 0, 0};
  std::vector<float> out(4), mean(1), rstd(1);
  ref::layernorm_forward(out, mean, rstd, x, w, b, 1, 4);
  const double s = 1.0 / std::sqrt(1.25 + kEps);
  EXPECT_FLOAT_EQ(mean[0], 2.5f);
  EXPECT_FLOAT_EQ(rstd[0], static_cast<float>(s));
  EXPECT_FLOAT_EQ(out[0], static_cast<float>(-1.5 * s));
  EXPECT_FLOAT_EQ(out[3], static_cast<float>(1.5 * s));
}

TEST(LayerNormReference, NormalizedRowsHaveMeanZeroAndVarianceOneBeforeTheAffine) {
  const int rows = 5, cols = 768;
  const std::vector<float> x = random_vector(static_cast<std::size_t>(rows) * cols, 1, 2.0f, 3.0f);
  const std::vector<float> ones(cols, 1.0f), zeros(cols, 0.0f);
  std::vector<float> out(x.size()), mean(rows), rstd(rows);
  ref::layernorm_forward(out, mean, rstd, x, ones, zeros, rows, cols);
  for (int r = 0; r < rows; ++r) {
    const std::size_t begin = static_cast<std::size_t>(r) * cols;
    const double var = row_variance(x, begin, cols);
    EXPECT_NEAR(row_mean(out, begin, cols), 0.0, 1e-6);
    // var(xhat) = var / (var + eps): 1 up to the epsilon.
    EXPECT_NEAR(row_variance(out, begin, cols), var / (var + kEps), 1e-6);
    EXPECT_NEAR(static_cast<double>(mean[static_cast<std::size_t>(r)]), row_mean(x, begin, cols), 1e-5);
    EXPECT_NEAR(static_cast<double>(rstd[static_cast<std::size_t>(r)]), 1.0 / std::sqrt(var + kEps), 1e-6);
  }
  // The affine: out' = w * xhat + b elementwise.
  const std::vector<float> w = random_vector(cols, 2), b = random_vector(cols, 3);
  std::vector<float> out2(x.size());
  ref::layernorm_forward(out2, mean, rstd, x, w, b, rows, cols);
  for (std::size_t i = 0; i < x.size(); ++i) EXPECT_NEAR(out2[i], w[i % cols] * out[i] + b[i % cols], 1e-5);
}

TEST(LayerNormReference, BackwardMatchesFiniteDifferencesAndAccumulates) {
  // L = sum(dout * layernorm(x)); dL/dx by central differences in double.
  const int rows = 3, cols = 16;
  const std::size_t n = static_cast<std::size_t>(rows) * cols;
  const std::vector<float> x = random_vector(n, 4), w = random_vector(cols, 5), b = random_vector(cols, 6);
  const std::vector<float> dout = random_vector(n, 7);
  std::vector<float> out(n), mean(rows), rstd(rows);
  ref::layernorm_forward(out, mean, rstd, x, w, b, rows, cols);
  std::vector<float> dinp(n);
  std::vector<float> dw(cols, 1.0f), db(cols, -1.0f);  // accumulated into
  ref::layernorm_backward(dinp, dw, db, dout, x, w, mean, rstd, rows, cols);

  auto loss = [&](const std::vector<float>& xs) {
    std::vector<float> o(n), m(rows), s(rows);
    ref::layernorm_forward(o, m, s, xs, w, b, rows, cols);
    double l = 0.0;
    for (std::size_t i = 0; i < n; ++i) l += static_cast<double>(dout[i]) * static_cast<double>(o[i]);
    return l;
  };
  const float h = 1e-2f;  // float inputs: a wide step, the loss is smooth
  for (std::size_t i = 0; i < n; i += 5) {
    std::vector<float> xp = x, xm = x;
    xp[i] += h;
    xm[i] -= h;
    const double numeric = (loss(xp) - loss(xm)) / (static_cast<double>(xp[i]) - static_cast<double>(xm[i]));
    EXPECT_NEAR(static_cast<double>(dinp[i]), numeric, 2e-3 * (1.0 + std::abs(numeric))) << "element " << i;
  }
  for (int r = 0; r < rows; ++r)  // shifting a row leaves the output unchanged: sum(dinp) = 0
    EXPECT_NEAR(row_mean(dinp, static_cast<std::size_t>(r) * cols, cols), 0.0, 1e-6);
  for (std::size_t c = 0; c < static_cast<std::size_t>(cols); ++c) {
    double sum_dout = 0.0, sum_dout_xhat = 0.0;
    for (std::size_t r = 0; r < static_cast<std::size_t>(rows); ++r) {
      const double xhat =
          (static_cast<double>(x[r * cols + c]) - static_cast<double>(mean[r])) * static_cast<double>(rstd[r]);
      sum_dout += static_cast<double>(dout[r * cols + c]);
      sum_dout_xhat += static_cast<double>(dout[r * cols + c]) * xhat;
    }
    EXPECT_NEAR(static_cast<double>(db[c]), -1.0 + sum_dout, 1e-5);
    EXPECT_NEAR(static_cast<double>(dw[c]), 1.0 + sum_dout_xhat, 1e-5);
  }
}

// ---- GELU -----------------------------------------------------------------------------

TEST(GeluReference, KnownValues) {
  EXPECT_EQ(ref::gelu(0.0), 0.0);
  EXPECT_NEAR(ref::gelu(1.0), 0.841192, 1e-6);
  EXPECT_NEAR(ref::gelu(-1.0), -0.158808, 1e-6);  // gelu(-x) = gelu(x) - x
  EXPECT_NEAR(ref::gelu(10.0), 10.0, 1e-12);
  EXPECT_NEAR(ref::gelu(-10.0), 0.0, 1e-12);
  EXPECT_DOUBLE_EQ(ref::gelu_derivative(0.0), 0.5);
}

TEST(GeluReference, DerivativeMatchesFiniteDifferences) {
  const double h = 1e-5;
  for (double x = -6.0; x <= 6.0; x += 0.37) {
    const double numeric = (ref::gelu(x + h) - ref::gelu(x - h)) / (2.0 * h);
    EXPECT_NEAR(ref::gelu_derivative(x), numeric, 1e-8) << "x = " << x;
  }
}

TEST(GeluReference, SpanFunctionsApplyElementwise) {
  const std::vector<float> x = {-2.0f, 0.0f, 1.0f, 3.0f};
  const std::vector<float> dout = {1.0f, 2.0f, -1.0f, 0.5f};
  std::vector<float> out(4), dinp(4);
  ref::gelu_forward(out, x);
  ref::gelu_backward(dinp, x, dout);
  for (std::size_t i = 0; i < x.size(); ++i) {
    EXPECT_FLOAT_EQ(out[i], static_cast<float>(ref::gelu(static_cast<double>(x[i]))));
    EXPECT_FLOAT_EQ(dinp[i],
                    static_cast<float>(static_cast<double>(dout[i]) * ref::gelu_derivative(static_cast<double>(x[i]))));
  }
}

// ---- residual -------------------------------------------------------------------------

TEST(ResidualReference, AddsElementwise) {
  const std::vector<float> a = {1.0f, -2.0f, 0.5f}, b = {0.25f, 2.0f, 4.0f};
  std::vector<float> out(3);
  ref::residual_forward(out, a, b);
  EXPECT_EQ(out, (std::vector<float>{1.25f, 0.0f, 4.5f}));
  EXPECT_THROW(ref::residual_forward(out, a, std::vector<float>(2)), std::invalid_argument);
}

// ---- fused softmax + cross-entropy ----------------------------------------------------

TEST(SoftmaxCrossEntropyReference, UniformLogitsGiveLogV) {
  const int rows = 3, V = 50257, Vp = 50304;  // GPT-2's vocabulary, padded to 128 as llm.c
  const std::vector<float> logits(static_cast<std::size_t>(rows) * Vp, 3.7f);
  const std::vector<int> targets = {0, 17, V - 1};
  std::vector<float> losses(rows), dlogits(logits.size());
  const float scale = 1.0f / rows;
  ref::softmax_cross_entropy(losses, dlogits, logits, targets, rows, V, Vp, scale);
  for (std::size_t r = 0; r < static_cast<std::size_t>(rows); ++r) {
    EXPECT_NEAR(static_cast<double>(losses[r]), std::log(static_cast<double>(V)), 1e-5);
    const float* d = dlogits.data() + r * Vp;
    const std::size_t other = targets[r] == 0 ? 1 : 0;  // a column that is not the target
    EXPECT_FLOAT_EQ(d[other], static_cast<float>(1.0 / V / rows));
    EXPECT_FLOAT_EQ(d[static_cast<std::size_t>(targets[r])], static_cast<float>((1.0 / V - 1.0) / rows));
    for (int i = V; i < Vp; ++i) EXPECT_EQ(d[i], 0.0f) << "padding column " << i;
  }
}

TEST(SoftmaxCrossEntropyReference, TwoClassesByHand) {
  // logits (0, ln 3): softmax (1/4, 3/4); target 0: loss ln 4, dlogits (1/4 - 1, 3/4).
  const std::vector<float> logits = {0.0f, static_cast<float>(std::log(3.0))};
  std::vector<float> losses(1), dlogits(2);
  ref::softmax_cross_entropy(losses, dlogits, logits, std::vector<int>{0}, 1, 2, 2, 1.0f);
  EXPECT_NEAR(static_cast<double>(losses[0]), std::log(4.0), 1e-6);
  EXPECT_NEAR(static_cast<double>(dlogits[0]), -0.75, 1e-6);
  EXPECT_NEAR(static_cast<double>(dlogits[1]), 0.75, 1e-6);
}

TEST(SoftmaxCrossEntropyReference, GradientRowsSumToZeroAndLossIsShiftInvariant) {
  const int rows = 4, V = 1000;
  std::vector<float> logits = random_vector(static_cast<std::size_t>(rows) * V, 8, 3.0f);
  const std::vector<int> targets = {0, 999, 500, 3};
  std::vector<float> losses(rows), dlogits(logits.size());
  ref::softmax_cross_entropy(losses, dlogits, logits, targets, rows, V, V, 0.5f);
  for (int r = 0; r < rows; ++r) {
    EXPECT_NEAR(row_mean(dlogits, static_cast<std::size_t>(r) * V, V), 0.0, 1e-9);
    EXPECT_GT(losses[static_cast<std::size_t>(r)], 0.0f);
  }
  std::vector<float> shifted_losses(rows), shifted_dlogits(logits.size());
  for (float& x : logits) x += 64.0f;  // exactly representable shift for |x| < 64
  ref::softmax_cross_entropy(shifted_losses, shifted_dlogits, logits, targets, rows, V, V, 0.5f);
  for (std::size_t r = 0; r < static_cast<std::size_t>(rows); ++r) EXPECT_NEAR(shifted_losses[r], losses[r], 1e-4);
}

TEST(SoftmaxCrossEntropyReference, RejectsBadShapesAndTargets) {
  std::vector<float> losses(1), dlogits(4);
  const std::vector<float> logits(4);
  EXPECT_THROW(ref::softmax_cross_entropy(losses, dlogits, logits, std::vector<int>{4}, 1, 4, 4, 1.0f),
               std::invalid_argument);
  EXPECT_THROW(ref::softmax_cross_entropy(losses, dlogits, logits, std::vector<int>{0}, 1, 5, 4, 1.0f),
               std::invalid_argument);
}

// ---- AdamW ----------------------------------------------------------------------------

TEST(AdamWReference, FirstStepFromZeroMomentsMovesByLrTimesSignOfGradient) {
  // Step 1 with m = v = 0: m_hat = g, v_hat = g^2, so the update is lr g / (|g| + eps).
  const float lr = 1e-3f, beta1 = 0.9f, beta2 = 0.95f, eps = 1e-8f, wd = 0.1f;
  std::vector<float> p = {1.0f, -2.0f, 0.5f, 3.0f};
  const std::vector<float> g = {0.3f, -0.01f, 2.0f, 0.0f};
  std::vector<float> m(4, 0.0f), v(4, 0.0f);
  const std::vector<float> p0 = p;
  ref::adamw_step(p, m, v, g, lr, beta1, beta2, eps, wd, 1);
  for (std::size_t i = 0; i < p.size(); ++i) {
    const double decayed = static_cast<double>(p0[i]) * (1.0 - static_cast<double>(lr) * static_cast<double>(wd));
    const double sign = g[i] > 0.0f ? 1.0 : (g[i] < 0.0f ? -1.0 : 0.0);
    EXPECT_NEAR(static_cast<double>(p[i]), decayed - static_cast<double>(lr) * sign,
                1e-6 * static_cast<double>(lr) + 1e-7)
        << "param " << i;
    EXPECT_FLOAT_EQ(m[i], (1.0f - beta1) * g[i]);
    EXPECT_FLOAT_EQ(v[i], (1.0f - beta2) * g[i] * g[i]);
  }
}

TEST(AdamWReference, BiasCorrectionAtLaterSteps) {
  // A constant gradient g from zero moments: after t steps m = (1 - b1^t) g and
  // v = (1 - b2^t) g^2, so every step moves by lr g / (|g| + eps), whatever t.
  const float lr = 0.01f, beta1 = 0.9f, beta2 = 0.999f, eps = 0.0f;
  std::vector<float> p = {0.0f}, m = {0.0f}, v = {0.0f};
  const std::vector<float> g = {-0.25f};
  for (int t = 1; t <= 10; ++t) ref::adamw_step(p, m, v, g, lr, beta1, beta2, eps, 0.0f, t);
  EXPECT_NEAR(p[0], 10 * 0.01f, 1e-6);
  EXPECT_NEAR(static_cast<double>(m[0]), (1.0 - std::pow(0.9, 10)) * -0.25, 1e-6);
  EXPECT_NEAR(static_cast<double>(v[0]), (1.0 - std::pow(0.999, 10)) * 0.0625, 1e-7);
}

// ---- bytes ----------------------------------------------------------------------------

TEST(ElementwiseBytes, CountEachInputAndOutputOnce) {
  // GPT-2 small: 8 x 1024 tokens, C = 768, V = 50257 padded to 50304.
  const std::size_t N = 8 * 1024, C = 768;
  EXPECT_EQ(ref::layernorm_forward_bytes(8192, 768), N * C * 2 + 2 * C * 2 + N * C * 2 + 2 * N * 4);
  EXPECT_EQ(ref::layernorm_backward_bytes(8192, 768), 2 * N * C * 2 + C * 2 + 2 * N * 4 + N * C * 2 + 4 * C * 4);
  EXPECT_EQ(ref::embedding_forward_bytes(8, 1024, 768, true), N * 4 + 2 * N * C * 2 + 1024 * C * 2);
  EXPECT_EQ(ref::embedding_forward_bytes(8, 1024, 768, false), N * 4 + 2 * N * C * 2);
  EXPECT_EQ(ref::embedding_backward_bytes(8, 1024, 768, 50257, true),
            N * 4 + N * C * 2 + 2 * N * C * 4 + 2 * 1024 * C * 4);
  EXPECT_EQ(ref::embedding_backward_bytes(1, 4, 8, 3, false), 4 * 4 + 4 * 8 * 2 + 2 * 3 * 8 * 4);  // 3 rows at most
  EXPECT_EQ(ref::gelu_forward_bytes(10), 40u);
  EXPECT_EQ(ref::gelu_backward_bytes(10), 60u);
  EXPECT_EQ(ref::residual_forward_bytes(10), 60u);
  EXPECT_EQ(ref::softmax_cross_entropy_bytes(2, 5, 8), 2u * 5 * 2 + 2 * 4 + 2 * 4 + 2 * 8 * 2);
  EXPECT_EQ(ref::adamw_bytes(1), 30u);
  EXPECT_THROW((void)ref::layernorm_forward_bytes(0, 768), std::invalid_argument);
  EXPECT_THROW((void)ref::adamw_bytes(0), std::invalid_argument);
  EXPECT_THROW((void)ref::softmax_cross_entropy_bytes(1, 8, 4), std::invalid_argument);
}
