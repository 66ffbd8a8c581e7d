#include "attention_ref.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <stdexcept>
#include <string>

namespace trainsim::kernels::ref {
namespace {

// Sizes as unsigned counts, after checking they are positive.
struct Dims {
  std::size_t bh;  // B * H independent (batch, head) slices
  std::size_t t;
  std::size_t d;
  [[nodiscard]] std::size_t elements() const { return bh * t * d; }
};

Dims checked_dims(AttentionShape shape) {
  if (shape.batch <= 0 || shape.heads <= 0 || shape.seq <= 0 || shape.head_dim <= 0)
    throw std::invalid_argument("attention reference: batch, heads, seq and head_dim must be positive, got " +
                                std::to_string(shape.batch) + ", " + std::to_string(shape.heads) + ", " +
                                std::to_string(shape.seq) + ", " + std::to_string(shape.head_dim));
  return {static_cast<std::size_t>(shape.batch) * static_cast<std::size_t>(shape.heads),
          static_cast<std::size_t>(shape.seq), static_cast<std::size_t>(shape.head_dim)};
}

template <typename T>
void check_size(std::span<const T> x, std::size_t expected, const char* name) {
  if (x.size() != expected)
    throw std::invalid_argument(std::string("attention reference: ") + name + " has " + std::to_string(x.size()) +
                                " elements, expected B*H*T*D = " + std::to_string(expected));
}

template <typename T>
double dot(const T* a, const T* b, std::size_t n) {
  double sum = 0.0;
  for (std::size_t i = 0; i < n; ++i) sum += static_cast<double>(a[i]) * static_cast<double>(b[i]);
  return sum;
}

// Row t of one slice: p[u] = softmax_u(q_t . k_u / sqrt(D)) for u <= t; returns the lse.
template <typename T>
double softmax_row(const T* q, const T* k, std::size_t t, std::size_t d, std::vector<double>& p) {
  const double scale = 1.0 / std::sqrt(static_cast<double>(d));
  double m = -std::numeric_limits<double>::infinity();
  for (std::size_t u = 0; u <= t; ++u) {
    p[u] = scale * dot(q + t * d, k + u * d, d);
    m = std::max(m, p[u]);
  }
  double l = 0.0;
  for (std::size_t u = 0; u <= t; ++u) {
    p[u] = std::exp(p[u] - m);
    l += p[u];
  }
  for (std::size_t u = 0; u <= t; ++u) p[u] /= l;
  return m + std::log(l);
}

template <typename T>
AttentionForwardResult<T> forward(std::span<const T> q, std::span<const T> k, std::span<const T> v,
                                  AttentionShape shape) {
  const Dims n = checked_dims(shape);
  check_size(q, n.elements(), "q");
  check_size(k, n.elements(), "k");
  check_size(v, n.elements(), "v");
  AttentionForwardResult<T> out{std::vector<T>(n.elements()), std::vector<T>(n.bh * n.t)};
  std::vector<double> p(n.t);
  std::vector<double> acc(n.d);
  for (std::size_t s = 0; s < n.bh; ++s) {
    const std::size_t base = s * n.t * n.d;
    for (std::size_t t = 0; t < n.t; ++t) {
      out.lse[s * n.t + t] = static_cast<T>(softmax_row(q.data() + base, k.data() + base, t, n.d, p));
      std::fill(acc.begin(), acc.end(), 0.0);
      for (std::size_t u = 0; u <= t; ++u)
        for (std::size_t i = 0; i < n.d; ++i) acc[i] += p[u] * static_cast<double>(v[base + u * n.d + i]);
      for (std::size_t i = 0; i < n.d; ++i) out.o[base + t * n.d + i] = static_cast<T>(acc[i]);
    }
  }
  return out;
}

// dV = P^T dO; dP = dO V^T; dS = P o (dP - rowsum(P o dP)); dQ = dS K / sqrt(D); dK = dS^T Q / sqrt(D).
template <typename T>
AttentionBackwardResult<T> backward(std::span<const T> q, std::span<const T> k, std::span<const T> v,
                                    std::span<const T> dout, AttentionShape shape) {
  const Dims n = checked_dims(shape);
  check_size(q, n.elements(), "q");
  check_size(k, n.elements(), "k");
  check_size(v, n.elements(), "v");
  check_size(dout, n.elements(), "dout");
  const double scale = 1.0 / std::sqrt(static_cast<double>(n.d));
  std::vector<double> dq(n.elements(), 0.0);
  std::vector<double> dk(n.elements(), 0.0);
  std::vector<double> dv(n.elements(), 0.0);
  std::vector<double> p(n.t);
  std::vector<double> dp(n.t);
  for (std::size_t s = 0; s < n.bh; ++s) {
    const std::size_t base = s * n.t * n.d;
    const T* qs = q.data() + base;
    const T* ks = k.data() + base;
    const T* vs = v.data() + base;
    const T* dos = dout.data() + base;
    for (std::size_t t = 0; t < n.t; ++t) {
      softmax_row(qs, ks, t, n.d, p);
      double delta = 0.0;
      for (std::size_t u = 0; u <= t; ++u) {
        dp[u] = dot(dos + t * n.d, vs + u * n.d, n.d);
        delta += p[u] * dp[u];
      }
      for (std::size_t u = 0; u <= t; ++u) {
        const double ds = p[u] * (dp[u] - delta) * scale;
        for (std::size_t i = 0; i < n.d; ++i) {
          dv[base + u * n.d + i] += p[u] * static_cast<double>(dos[t * n.d + i]);
          dq[base + t * n.d + i] += ds * static_cast<double>(ks[u * n.d + i]);
          dk[base + u * n.d + i] += ds * static_cast<double>(qs[t * n.d + i]);
        }
      }
    }
  }
  const auto cast = [](const std::vector<double>& x) {
    std::vector<T> y(x.size());
    std::transform(x.begin(), x.end(), y.begin(), [](double e) { return static_cast<T>(e); });
    return y;
  };
  return {cast(dq), cast(dk), cast(dv)};
}

}  // namespace

AttentionForwardResult<float> attention_forward(std::span<const float> q, std::span<const float> k,
                                                std::span<const float> v, AttentionShape shape) {
  return forward(q, k, v, shape);
}

AttentionForwardResult<double> attention_forward(std::span<const double> q, std::span<const double> k,
                                                 std::span<const double> v, AttentionShape shape) {
  return forward(q, k, v, shape);
}

AttentionBackwardResult<float> attention_backward(std::span<const float> q, std::span<const float> k,
                                                  std::span<const float> v, std::span<const float> dout,
                                                  AttentionShape shape) {
  return backward(q, k, v, dout, shape);
}

AttentionBackwardResult<double> attention_backward(std::span<const double> q, std::span<const double> k,
                                                   std::span<const double> v, std::span<const double> dout,
                                                   AttentionShape shape) {
  return backward(q, k, v, dout, shape);
}

double attention_forward_flops(AttentionShape shape) {
  const double t = shape.seq;
  return 4.0 * shape.batch * shape.heads * t * t * shape.head_dim * 0.5;
}

double attention_backward_flops(AttentionShape shape) { return 2.5 * attention_forward_flops(shape); }

double attention_forward_bytes(AttentionShape shape) {
  const double rows = static_cast<double>(shape.batch) * shape.heads * shape.seq;
  return rows * shape.head_dim * 2.0 * 4.0 + rows * 4.0;  // q, k, v, o in bf16; lse in fp32
}

double attention_backward_bytes(AttentionShape shape) {
  const double rows = static_cast<double>(shape.batch) * shape.heads * shape.seq;
  return rows * shape.head_dim * 2.0 * 8.0 + rows * 4.0;  // q, k, v, o, dout, dq, dk, dv; lse
}

}  // namespace trainsim::kernels::ref
