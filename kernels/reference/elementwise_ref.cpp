// CPU references for the elementwise and normalization kernels; see elementwise_ref.h.
#include "elementwise_ref.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace trainsim::kernels::ref {
namespace {

void require_positive(const char* what, const char* name, long long value) {
  if (value <= 0)
    throw std::invalid_argument(std::string(what) + ": " + name + " must be positive, got " + std::to_string(value));
}

template <typename T>
void require_size(const char* what, const char* name, std::span<T> s, std::size_t expected) {
  if (s.size() != expected)
    throw std::invalid_argument(std::string(what) + ": " + name + " has " + std::to_string(s.size()) +
                                " elements, expected " + std::to_string(expected));
}

std::size_t sz(int v) { return static_cast<std::size_t>(v); }

void require_token(const char* what, const char* name, int token, int V) {
  if (token < 0 || token >= V)
    throw std::invalid_argument(std::string(what) + ": " + name + " " + std::to_string(token) + " is outside [0, " +
                                std::to_string(V) + ")");
}

constexpr double kSqrt2OverPi = 0.7978845608028654;  // sqrt(2 / pi)
constexpr double kGeluCubic = 0.044715;              // Hendrycks & Gimpel 2016, eq. for GELU(tanh)

}  // namespace

// ---- embedding ------------------------------------------------------------------------

void embedding_forward(std::span<float> out, std::span<const int> tokens, std::span<const float> wte,
                       std::span<const float> wpe, int B, int T, int C, int V) {
  constexpr const char* what = "ref::embedding_forward";
  require_positive(what, "B", B);
  require_positive(what, "T", T);
  require_positive(what, "C", C);
  require_positive(what, "V", V);
  require_size(what, "out", out, sz(B) * sz(T) * sz(C));
  require_size(what, "tokens", tokens, sz(B) * sz(T));
  require_size(what, "wte", wte, sz(V) * sz(C));
  if (!wpe.empty()) require_size(what, "wpe", wpe, sz(T) * sz(C));
  for (std::size_t bt = 0; bt < sz(B) * sz(T); ++bt) {
    require_token(what, "token", tokens[bt], V);
    const std::size_t t = bt % sz(T);
    const std::size_t tok = sz(tokens[bt]);
    for (std::size_t c = 0; c < sz(C); ++c) {
      double x = static_cast<double>(wte[tok * sz(C) + c]);
      if (!wpe.empty()) x += static_cast<double>(wpe[t * sz(C) + c]);
      out[bt * sz(C) + c] = static_cast<float>(x);
    }
  }
}

void embedding_backward(std::span<float> dwte, std::span<float> dwpe, std::span<const float> dout,
                        std::span<const int> tokens, int B, int T, int C, int V) {
  constexpr const char* what = "ref::embedding_backward";
  require_positive(what, "B", B);
  require_positive(what, "T", T);
  require_positive(what, "C", C);
  require_positive(what, "V", V);
  require_size(what, "dwte", dwte, sz(V) * sz(C));
  if (!dwpe.empty()) require_size(what, "dwpe", dwpe, sz(T) * sz(C));
  require_size(what, "dout", dout, sz(B) * sz(T) * sz(C));
  require_size(what, "tokens", tokens, sz(B) * sz(T));
  // Sum in double per destination, then add once, so repeated tokens round once.
  std::vector<double> acc_wte(dwte.size(), 0.0);
  std::vector<double> acc_wpe(dwpe.size(), 0.0);
  for (std::size_t bt = 0; bt < sz(B) * sz(T); ++bt) {
    require_token(what, "token", tokens[bt], V);
    const std::size_t t = bt % sz(T);
    const std::size_t tok = sz(tokens[bt]);
    for (std::size_t c = 0; c < sz(C); ++c) {
      const double d = static_cast<double>(dout[bt * sz(C) + c]);
      acc_wte[tok * sz(C) + c] += d;
      if (!dwpe.empty()) acc_wpe[t * sz(C) + c] += d;
    }
  }
  for (std::size_t i = 0; i < dwte.size(); ++i) dwte[i] = static_cast<float>(static_cast<double>(dwte[i]) + acc_wte[i]);
  for (std::size_t i = 0; i < dwpe.size(); ++i) dwpe[i] = static_cast<float>(static_cast<double>(dwpe[i]) + acc_wpe[i]);
}

// ---- layernorm ------------------------------------------------------------------------

void layernorm_forward(std::span<float> out, std::span<float> mean, std::span<float> rstd, std::span<const float> inp,
                       std::span<const float> weight, std::span<const float> bias, int rows, int cols) {
  constexpr const char* what = "ref::layernorm_forward";
  require_positive(what, "rows", rows);
  require_positive(what, "cols", cols);
  const std::size_t n = sz(rows) * sz(cols);
  require_size(what, "out", out, n);
  require_size(what, "mean", mean, sz(rows));
  require_size(what, "rstd", rstd, sz(rows));
  require_size(what, "inp", inp, n);
  require_size(what, "weight", weight, sz(cols));
  require_size(what, "bias", bias, sz(cols));
  const std::size_t C = sz(cols);
  for (std::size_t r = 0; r < sz(rows); ++r) {
    const float* x = inp.data() + r * C;
    double sum = 0.0;
    for (std::size_t c = 0; c < C; ++c) sum += static_cast<double>(x[c]);
    const double mu = sum / static_cast<double>(C);
    double sq = 0.0;
    for (std::size_t c = 0; c < C; ++c) {
      const double d = static_cast<double>(x[c]) - mu;
      sq += d * d;
    }
    const double s = 1.0 / std::sqrt(sq / static_cast<double>(C) + static_cast<double>(kLayerNormEps));
    for (std::size_t c = 0; c < C; ++c)
      out[r * C + c] = static_cast<float>((static_cast<double>(x[c]) - mu) * s * static_cast<double>(weight[c]) +
                                          static_cast<double>(bias[c]));
    mean[r] = static_cast<float>(mu);
    rstd[r] = static_cast<float>(s);
  }
}

void layernorm_backward(std::span<float> dinp, std::span<float> dweight, std::span<float> dbias,
                        std::span<const float> dout, std::span<const float> inp, std::span<const float> weight,
                        std::span<const float> mean, std::span<const float> rstd, int rows, int cols) {
  constexpr const char* what = "ref::layernorm_backward";
  require_positive(what, "rows", rows);
  require_positive(what, "cols", cols);
  const std::size_t n = sz(rows) * sz(cols);
  require_size(what, "dinp", dinp, n);
  require_size(what, "dweight", dweight, sz(cols));
  require_size(what, "dbias", dbias, sz(cols));
  require_size(what, "dout", dout, n);
  require_size(what, "inp", inp, n);
  require_size(what, "weight", weight, sz(cols));
  require_size(what, "mean", mean, sz(rows));
  require_size(what, "rstd", rstd, sz(rows));
  const std::size_t C = sz(cols);
  std::vector<double> dw(C, 0.0);
  std::vector<double> db(C, 0.0);
  std::vector<double> xhat(C);
  for (std::size_t r = 0; r < sz(rows); ++r) {
    const double mu = static_cast<double>(mean[r]);
    const double s = static_cast<double>(rstd[r]);
    // dL/dx = rstd (dnorm - mean(dnorm) - xhat mean(dnorm xhat)), dnorm = dout * weight.
    double dnorm_mean = 0.0;
    double dnorm_xhat_mean = 0.0;
    for (std::size_t c = 0; c < C; ++c) {
      const double g = static_cast<double>(dout[r * C + c]);
      xhat[c] = (static_cast<double>(inp[r * C + c]) - mu) * s;
      const double dnorm = g * static_cast<double>(weight[c]);
      dnorm_mean += dnorm;
      dnorm_xhat_mean += dnorm * xhat[c];
      dw[c] += g * xhat[c];
      db[c] += g;
    }
    dnorm_mean /= static_cast<double>(C);
    dnorm_xhat_mean /= static_cast<double>(C);
    for (std::size_t c = 0; c < C; ++c) {
      const double dnorm = static_cast<double>(dout[r * C + c]) * static_cast<double>(weight[c]);
      dinp[r * C + c] = static_cast<float>((dnorm - dnorm_mean - xhat[c] * dnorm_xhat_mean) * s);
    }
  }
  for (std::size_t c = 0; c < C; ++c) {
    dweight[c] = static_cast<float>(static_cast<double>(dweight[c]) + dw[c]);
    dbias[c] = static_cast<float>(static_cast<double>(dbias[c]) + db[c]);
  }
}

// ---- GELU -----------------------------------------------------------------------------

double gelu(double x) { return 0.5 * x * (1.0 + std::tanh(kSqrt2OverPi * (x + kGeluCubic * x * x * x))); }

double gelu_derivative(double x) {
  const double u = kSqrt2OverPi * (x + kGeluCubic * x * x * x);
  const double th = std::tanh(u);
  const double du = kSqrt2OverPi * (1.0 + 3.0 * kGeluCubic * x * x);
  return 0.5 * (1.0 + th) + 0.5 * x * (1.0 - th * th) * du;
}

void gelu_forward(std::span<float> out, std::span<const float> inp) {
  constexpr const char* what = "ref::gelu_forward";
  require_size(what, "out", out, inp.size());
  for (std::size_t i = 0; i < inp.size(); ++i) out[i] = static_cast<float>(gelu(static_cast<double>(inp[i])));
}

void gelu_backward(std::span<float> dinp, std::span<const float> inp, std::span<const float> dout) {
  constexpr const char* what = "ref::gelu_backward";
  require_size(what, "dinp", dinp, inp.size());
  require_size(what, "dout", dout, inp.size());
  for (std::size_t i = 0; i < inp.size(); ++i)
    dinp[i] = static_cast<float>(static_cast<double>(dout[i]) * gelu_derivative(static_cast<double>(inp[i])));
}

// ---- residual -------------------------------------------------------------------------

void residual_forward(std::span<float> out, std::span<const float> a, std::span<const float> b) {
  constexpr const char* what = "ref::residual_forward";
  require_size(what, "out", out, a.size());
  require_size(what, "b", b, a.size());
  for (std::size_t i = 0; i < a.size(); ++i)
    out[i] = static_cast<float>(static_cast<double>(a[i]) + static_cast<double>(b[i]));
}

// ---- fused softmax + cross-entropy ----------------------------------------------------

void softmax_cross_entropy(std::span<float> losses, std::span<float> dlogits, std::span<const float> logits,
                           std::span<const int> targets, int rows, int V, int Vp, float dloss_scale) {
  constexpr const char* what = "ref::softmax_cross_entropy";
  require_positive(what, "rows", rows);
  require_positive(what, "V", V);
  require_positive(what, "Vp", Vp);
  if (Vp < V)
    throw std::invalid_argument(std::string(what) + ": Vp (" + std::to_string(Vp) + ") must be >= V (" +
                                std::to_string(V) + ")");
  require_size(what, "losses", losses, sz(rows));
  require_size(what, "dlogits", dlogits, sz(rows) * sz(Vp));
  require_size(what, "logits", logits, sz(rows) * sz(Vp));
  require_size(what, "targets", targets, sz(rows));
  for (std::size_t r = 0; r < sz(rows); ++r) {
    require_token(what, "target", targets[r], V);
    const float* x = logits.data() + r * sz(Vp);
    double mx = -std::numeric_limits<double>::infinity();
    for (std::size_t i = 0; i < sz(V); ++i) mx = std::max(mx, static_cast<double>(x[i]));
    double sum = 0.0;
    for (std::size_t i = 0; i < sz(V); ++i) sum += std::exp(static_cast<double>(x[i]) - mx);
    const std::size_t target = sz(targets[r]);
    losses[r] = static_cast<float>(std::log(sum) + mx - static_cast<double>(x[target]));
    for (std::size_t i = 0; i < sz(Vp); ++i) {
      double d = 0.0;
      if (i < sz(V)) {
        const double p = std::exp(static_cast<double>(x[i]) - mx) / sum;
        d = (p - (i == target ? 1.0 : 0.0)) * static_cast<double>(dloss_scale);
      }
      dlogits[r * sz(Vp) + i] = static_cast<float>(d);
    }
  }
}

// ---- AdamW ----------------------------------------------------------------------------

void adamw_step(std::span<float> params, std::span<float> m, std::span<float> v, std::span<const float> grads, float lr,
                float beta1, float beta2, float eps, float weight_decay, int step) {
  constexpr const char* what = "ref::adamw_step";
  require_size(what, "m", m, params.size());
  require_size(what, "v", v, params.size());
  require_size(what, "grads", grads, params.size());
  require_positive(what, "step", step);
  const double b1 = static_cast<double>(beta1);
  const double b2 = static_cast<double>(beta2);
  const double bc1 = 1.0 - std::pow(b1, step);
  const double bc2 = 1.0 - std::pow(b2, step);
  for (std::size_t i = 0; i < params.size(); ++i) {
    const double g = static_cast<double>(grads[i]);
    double p = static_cast<double>(params[i]);
    const double mi = b1 * static_cast<double>(m[i]) + (1.0 - b1) * g;
    const double vi = b2 * static_cast<double>(v[i]) + (1.0 - b2) * g * g;
    p -= static_cast<double>(lr) * static_cast<double>(weight_decay) * p;
    p -= static_cast<double>(lr) * (mi / bc1) / (std::sqrt(vi / bc2) + static_cast<double>(eps));
    params[i] = static_cast<float>(p);
    m[i] = static_cast<float>(mi);
    v[i] = static_cast<float>(vi);
  }
}

// ---- bytes ----------------------------------------------------------------------------

namespace {
constexpr std::size_t kBf16 = 2;
constexpr std::size_t kF32 = 4;
constexpr std::size_t kI32 = 4;
}  // namespace

std::size_t embedding_forward_bytes(int B, int T, int C, bool with_wpe) {
  constexpr const char* what = "embedding_forward_bytes";
  require_positive(what, "B", B);
  require_positive(what, "T", T);
  require_positive(what, "C", C);
  const std::size_t n = sz(B) * sz(T);
  std::size_t bytes = n * kI32 + n * sz(C) * kBf16 /* gathered wte rows */ + n * sz(C) * kBf16 /* out */;
  if (with_wpe) bytes += sz(T) * sz(C) * kBf16;
  return bytes;
}

std::size_t embedding_backward_bytes(int B, int T, int C, int V, bool with_wpe) {
  constexpr const char* what = "embedding_backward_bytes";
  require_positive(what, "B", B);
  require_positive(what, "T", T);
  require_positive(what, "C", C);
  require_positive(what, "V", V);
  const std::size_t n = sz(B) * sz(T);
  const std::size_t touched_rows = std::min(n, sz(V));
  std::size_t bytes = n * kI32 + n * sz(C) * kBf16 /* dout */ + 2 * touched_rows * sz(C) * kF32 /* dwte += */;
  if (with_wpe) bytes += 2 * sz(T) * sz(C) * kF32;  // dwpe +=
  return bytes;
}

std::size_t layernorm_forward_bytes(int rows, int cols) {
  constexpr const char* what = "layernorm_forward_bytes";
  require_positive(what, "rows", rows);
  require_positive(what, "cols", cols);
  const std::size_t n = sz(rows) * sz(cols);
  return n * kBf16 /* inp */ + 2 * sz(cols) * kBf16 /* weight, bias */ + n * kBf16 /* out */ +
         2 * sz(rows) * kF32 /* mean, rstd */;
}

std::size_t layernorm_backward_bytes(int rows, int cols) {
  constexpr const char* what = "layernorm_backward_bytes";
  require_positive(what, "rows", rows);
  require_positive(what, "cols", cols);
  const std::size_t n = sz(rows) * sz(cols);
  return 2 * n * kBf16 /* dout, inp */ + sz(cols) * kBf16 /* weight */ + 2 * sz(rows) * kF32 /* mean, rstd */ +
         n * kBf16 /* dinp */ + 2 * 2 * sz(cols) * kF32 /* dweight, dbias += */;
}

std::size_t gelu_forward_bytes(std::size_t n) {
  if (n == 0) throw std::invalid_argument("gelu_forward_bytes: n must be positive, got 0");
  return 2 * n * kBf16;
}

std::size_t gelu_backward_bytes(std::size_t n) {
  if (n == 0) throw std::invalid_argument("gelu_backward_bytes: n must be positive, got 0");
  return 3 * n * kBf16;
}

std::size_t residual_forward_bytes(std::size_t n) {
  if (n == 0) throw std::invalid_argument("residual_forward_bytes: n must be positive, got 0");
  return 3 * n * kBf16;
}

std::size_t softmax_cross_entropy_bytes(int rows, int V, int Vp) {
  constexpr const char* what = "softmax_cross_entropy_bytes";
  require_positive(what, "rows", rows);
  require_positive(what, "V", V);
  require_positive(what, "Vp", Vp);
  if (Vp < V) throw std::invalid_argument(std::string(what) + ": Vp must be >= V");
  return sz(rows) * sz(V) * kBf16 /* logits */ + sz(rows) * kI32 /* targets */ + sz(rows) * kF32 /* losses */ +
         sz(rows) * sz(Vp) * kBf16 /* dlogits */;
}

std::size_t adamw_bytes(std::size_t n) {
  if (n == 0) throw std::invalid_argument("adamw_bytes: n must be positive, got 0");
  return n * (4 * kF32 /* params, grads, m, v */ + 3 * kF32 /* params, m, v */ + kBf16 /* bf16 copy */);
}

}  // namespace trainsim::kernels::ref
