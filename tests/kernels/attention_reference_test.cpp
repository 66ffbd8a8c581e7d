// The causal attention CPU reference against closed forms and finite differences.
#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <random>
#include <stdexcept>
#include <vector>

#include "attention_ref.h"

namespace trainsim::kernels::ref {
namespace {

std::size_t elements(AttentionShape s) {
  return static_cast<std::size_t>(s.batch) * static_cast<std::size_t>(s.heads) * static_cast<std::size_t>(s.seq) *
         static_cast<std::size_t>(s.head_dim);
}

template <typename T>
std::vector<T> normal(std::size_t n, std::mt19937& rng) {
  std::normal_distribution<T> dist(T{0}, T{1});
  std::vector<T> x(n);
  for (auto& e : x) e = dist(rng);
  return x;
}

// One query: it sees only itself, so the output is its value row and lse its score.
TEST(AttentionReference, SingleTokenOutputsItsValueAndLseIsTheScore) {
  const AttentionShape s{2, 3, 1, 8};
  std::mt19937 rng(1);
  const auto q = normal<float>(elements(s), rng);
  const auto k = normal<float>(elements(s), rng);
  const auto v = normal<float>(elements(s), rng);
  const auto r = attention_forward(q, k, v, s);
  for (std::size_t i = 0; i < v.size(); ++i) EXPECT_FLOAT_EQ(r.o[i], v[i]) << i;
  for (std::size_t bh = 0; bh < 6; ++bh) {
    double score = 0.0;
    for (std::size_t i = 0; i < 8; ++i) score += double{q[bh * 8 + i]} * double{k[bh * 8 + i]};
    EXPECT_NEAR(r.lse[bh], score / std::sqrt(8.0), 1e-6) << bh;
  }
}

// All keys equal: every visible score of a row is the same, so row t averages v[0..t].
TEST(AttentionReference, EqualKeysAverageTheVisibleValues) {
  const AttentionShape s{1, 2, 7, 4};
  std::mt19937 rng(2);
  const auto q = normal<double>(elements(s), rng);
  const auto v = normal<double>(elements(s), rng);
  std::vector<double> k(elements(s));
  for (std::size_t i = 0; i < k.size(); ++i) k[i] = 0.25 * static_cast<double>(i % 4) - 0.3;
  const auto r = attention_forward(q, k, v, s);
  for (std::size_t h = 0; h < 2; ++h)
    for (std::size_t t = 0; t < 7; ++t)
      for (std::size_t i = 0; i < 4; ++i) {
        double mean = 0.0;
        for (std::size_t u = 0; u <= t; ++u) mean += v[(h * 7 + u) * 4 + i];
        mean /= static_cast<double>(t + 1);
        EXPECT_NEAR(r.o[(h * 7 + t) * 4 + i], mean, 1e-12) << h << " " << t << " " << i;
      }
}

// Zero queries give zero scores: row t sums t+1 ones, lse = ln(t+1).
TEST(AttentionReference, ZeroScoresGiveLseLnOfVisibleCount) {
  const AttentionShape s{1, 1, 100, 16};
  std::mt19937 rng(3);
  const std::vector<double> q(elements(s), 0.0);
  const auto k = normal<double>(elements(s), rng);
  const auto v = normal<double>(elements(s), rng);
  const auto r = attention_forward(q, k, v, s);
  for (std::size_t t = 0; t < 100; ++t) EXPECT_NEAR(r.lse[t], std::log(static_cast<double>(t + 1)), 1e-12) << t;
}

// Causality: changing the last token's key and value leaves every earlier row unchanged.
TEST(AttentionReference, RowsDoNotSeeLaterTokens) {
  const AttentionShape s{1, 1, 9, 4};
  std::mt19937 rng(4);
  const auto q = normal<double>(elements(s), rng);
  auto k = normal<double>(elements(s), rng);
  auto v = normal<double>(elements(s), rng);
  const auto before = attention_forward(q, k, v, s);
  for (std::size_t i = 8 * 4; i < 9 * 4; ++i) {
    k[i] += 3.0;
    v[i] -= 5.0;
  }
  const auto after = attention_forward(q, k, v, s);
  for (std::size_t i = 0; i < 8 * 4; ++i) EXPECT_EQ(after.o[i], before.o[i]) << i;
  for (std::size_t t = 0; t < 8; ++t) EXPECT_EQ(after.lse[t], before.lse[t]) << t;
  EXPECT_NE(after.o[8 * 4], before.o[8 * 4]);
}

// dL/dx of L = sum(o * w) against central differences, for every element of q, k, v.
TEST(AttentionReference, BackwardMatchesCentralFiniteDifferences) {
  const AttentionShape s{1, 2, 5, 3};
  std::mt19937 rng(5);
  std::vector<double> q = normal<double>(elements(s), rng);
  std::vector<double> k = normal<double>(elements(s), rng);
  std::vector<double> v = normal<double>(elements(s), rng);
  const std::vector<double> w = normal<double>(elements(s), rng);
  const auto loss = [&] {
    const auto o = attention_forward(q, k, v, s).o;
    double sum = 0.0;
    for (std::size_t i = 0; i < o.size(); ++i) sum += o[i] * w[i];
    return sum;
  };
  const auto grads = attention_backward(q, k, v, w, s);
  // Truncation error ~ eps^2 |L'''|, rounding ~ 1e-16 |L| / eps: both far below 1e-8.
  const double eps = 1e-5;
  const auto check = [&](std::vector<double>& x, const std::vector<double>& grad, const char* name) {
    for (std::size_t i = 0; i < x.size(); ++i) {
      const double saved = x[i];
      x[i] = saved + eps;
      const double plus = loss();
      x[i] = saved - eps;
      const double minus = loss();
      x[i] = saved;
      EXPECT_NEAR(grad[i], (plus - minus) / (2.0 * eps), 1e-8) << name << "[" << i << "]";
    }
  };
  check(q, grads.dq, "dq");
  check(k, grads.dk, "dk");
  check(v, grads.dv, "dv");
}

// The first token's query has nothing to compare against: its softmax is constant, dq = 0.
TEST(AttentionReference, FirstQueryHasZeroGradient) {
  const AttentionShape s{1, 1, 4, 8};
  std::mt19937 rng(6);
  const auto q = normal<float>(elements(s), rng);
  const auto k = normal<float>(elements(s), rng);
  const auto v = normal<float>(elements(s), rng);
  const auto dout = normal<float>(elements(s), rng);
  const auto g = attention_backward(q, k, v, dout, s);
  for (std::size_t i = 0; i < 8; ++i) EXPECT_NEAR(g.dq[i], 0.0F, 1e-7F) << i;
}

TEST(AttentionReference, FlopsAndBytesFollowTheirClosedForms) {
  const AttentionShape s{2, 3, 128, 64};
  // 4 B H T^2 D / 2 = 2 * 2 * 3 * 128^2 * 64.
  EXPECT_DOUBLE_EQ(attention_forward_flops(s), 12'582'912.0);
  EXPECT_DOUBLE_EQ(attention_backward_flops(s), 2.5 * 12'582'912.0);
  // B H T = 768 rows: forward 4 bf16 tensors of 64 + one fp32; backward 8 bf16 tensors + one fp32.
  EXPECT_DOUBLE_EQ(attention_forward_bytes(s), 768.0 * (4 * 64 * 2 + 4));
  EXPECT_DOUBLE_EQ(attention_backward_bytes(s), 768.0 * (8 * 64 * 2 + 4));
}

TEST(AttentionReference, RejectsBadShapesAndSizes) {
  const std::vector<float> x(8, 0.0F);
  EXPECT_THROW(attention_forward(x, x, x, AttentionShape{1, 1, 0, 8}), std::invalid_argument);
  EXPECT_THROW(attention_forward(x, x, x, AttentionShape{1, -1, 1, 8}), std::invalid_argument);
  EXPECT_THROW(attention_forward(x, x, x, AttentionShape{1, 1, 2, 8}), std::invalid_argument);
  EXPECT_THROW(attention_backward(x, x, x, x, AttentionShape{1, 1, 1, 4}), std::invalid_argument);
}

}  // namespace
}  // namespace trainsim::kernels::ref
