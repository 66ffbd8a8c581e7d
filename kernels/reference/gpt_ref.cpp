#include "gpt_ref.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <stdexcept>
#include <string>

#include "attention_ref.h"
#include "elementwise_ref.h"

namespace trainsim::kernels::ref {

namespace {

using Vec = std::vector<double>;
using std::size_t;

// out[i, j] = sum_p in[i, p] w[j, p] (+ b[j]);  in (N, K), w (M, K), out (N, M).
void linear(double* out, const double* in, const double* w, const double* b, size_t N, size_t M, size_t K) {
  for (size_t i = 0; i < N; ++i)
    for (size_t j = 0; j < M; ++j) {
      double acc = b != nullptr ? b[j] : 0.0;
      for (size_t p = 0; p < K; ++p) acc += in[i * K + p] * w[j * K + p];
      out[i * M + j] = acc;
    }
}

// din = dout w (overwritten, when din is not null); dw += dout^T in; db += colsum(dout).
void linear_backward(double* din, double* dw, double* db, const double* dout, const double* in, const double* w,
                     size_t N, size_t M, size_t K) {
  if (din != nullptr)
    for (size_t i = 0; i < N; ++i)
      for (size_t p = 0; p < K; ++p) {
        double acc = 0.0;
        for (size_t j = 0; j < M; ++j) acc += dout[i * M + j] * w[j * K + p];
        din[i * K + p] = acc;
      }
  for (size_t i = 0; i < N; ++i)
    for (size_t j = 0; j < M; ++j) {
      const double g = dout[i * M + j];
      if (db != nullptr) db[j] += g;
      for (size_t p = 0; p < K; ++p) dw[j * K + p] += g * in[i * K + p];
    }
}

// LayerNorm over rows of C, biased variance, eps as the GPU kernel.
void layernorm(double* out, double* mean, double* rstd, const double* in, const double* w, const double* b, size_t N,
               size_t C) {
  const double eps = static_cast<double>(kLayerNormEps);
  for (size_t i = 0; i < N; ++i) {
    const double* x = in + i * C;
    double m = 0.0;
    for (size_t c = 0; c < C; ++c) m += x[c];
    m /= static_cast<double>(C);
    double var = 0.0;
    for (size_t c = 0; c < C; ++c) var += (x[c] - m) * (x[c] - m);
    var /= static_cast<double>(C);
    const double r = 1.0 / std::sqrt(var + eps);
    for (size_t c = 0; c < C; ++c) out[i * C + c] = (x[c] - m) * r * w[c] + b[c];
    mean[i] = m;
    rstd[i] = r;
  }
}

// din += d LN / d in (accumulated), dw += , db += .
void layernorm_backward(double* din, double* dw, double* db, const double* dout, const double* in, const double* w,
                        const double* mean, const double* rstd, size_t N, size_t C) {
  for (size_t i = 0; i < N; ++i) {
    const double* x = in + i * C;
    const double* g = dout + i * C;
    double sum_g = 0.0, sum_gx = 0.0;
    for (size_t c = 0; c < C; ++c) {
      const double xhat = (x[c] - mean[i]) * rstd[i];
      const double gw = g[c] * w[c];
      sum_g += gw;
      sum_gx += gw * xhat;
      dw[c] += g[c] * xhat;
      db[c] += g[c];
    }
    sum_g /= static_cast<double>(C);
    sum_gx /= static_cast<double>(C);
    for (size_t c = 0; c < C; ++c) {
      const double xhat = (x[c] - mean[i]) * rstd[i];
      din[i * C + c] += rstd[i] * (g[c] * w[c] - sum_g - xhat * sum_gx);
    }
  }
}

struct LayerActs {
  Vec x;                   // input (N, C)
  Vec a, a_mean, a_rstd;   // LN1
  Vec qkv;                 // (N, 3C)
  Vec q, k, v;             // (B, H, T, D)
  Vec y;                   // attention output, (N, C)
  Vec x2;                  // after the attention residual
  Vec m, m_mean, m_rstd;   // LN2
  Vec f;                   // fc pre-activation (N, F)
  Vec h;                   // gelu(f)
};

}  // namespace

GptRefResult gpt_forward_backward(const GptConfig& cfg, std::span<const double> params, std::span<const int> tokens,
                                  std::span<const int> targets, int batch, bool backward) {
  const GptLayout L = gpt_layout(cfg);
  if (batch <= 0) throw std::invalid_argument("gpt_forward_backward: batch must be positive");
  const size_t B = static_cast<size_t>(batch), T = static_cast<size_t>(cfg.seq), C = static_cast<size_t>(cfg.hidden);
  const size_t H = static_cast<size_t>(cfg.heads), D = static_cast<size_t>(cfg.head_dim());
  const size_t F = static_cast<size_t>(cfg.ffn()), V = static_cast<size_t>(cfg.vocab);
  const size_t Vp = static_cast<size_t>(cfg.padded_vocab), N = B * T;
  if (params.size() != L.total) throw std::invalid_argument("gpt_forward_backward: params has the wrong size");
  if (tokens.size() != N || targets.size() != N)
    throw std::invalid_argument("gpt_forward_backward: tokens and targets must hold batch * seq entries");
  for (size_t i = 0; i < N; ++i)
    if (tokens[i] < 0 || static_cast<size_t>(tokens[i]) >= V || targets[i] < 0 || static_cast<size_t>(targets[i]) >= V)
      throw std::invalid_argument("gpt_forward_backward: token " + std::to_string(i) + " outside [0, vocab)");
  const double* P = params.data();
  const AttentionShape shape{batch, cfg.heads, cfg.seq, cfg.head_dim()};

  // ---- forward ----
  Vec x(N * C);
  for (size_t b = 0; b < B; ++b)
    for (size_t t = 0; t < T; ++t)
      for (size_t c = 0; c < C; ++c)
        x[(b * T + t) * C + c] = P[L.wte + static_cast<size_t>(tokens[b * T + t]) * C + c] + P[L.wpe + t * C + c];
  std::vector<LayerActs> acts(L.layer.size());
  for (size_t l = 0; l < L.layer.size(); ++l) {
    const LayerOffsets& o = L.layer[l];
    LayerActs& A = acts[l];
    A.x = x;
    A.a.resize(N * C), A.a_mean.resize(N), A.a_rstd.resize(N);
    layernorm(A.a.data(), A.a_mean.data(), A.a_rstd.data(), A.x.data(), P + o.ln1_w, P + o.ln1_b, N, C);
    A.qkv.resize(N * 3 * C);
    linear(A.qkv.data(), A.a.data(), P + o.qkv_w, P + o.qkv_b, N, 3 * C, C);
    A.q.resize(N * C), A.k.resize(N * C), A.v.resize(N * C);
    for (size_t b = 0; b < B; ++b)
      for (size_t t = 0; t < T; ++t)
        for (size_t h = 0; h < H; ++h)
          for (size_t d = 0; d < D; ++d) {
            const size_t src = (b * T + t) * 3 * C + h * D + d, dst = ((b * H + h) * T + t) * D + d;
            A.q[dst] = A.qkv[src];
            A.k[dst] = A.qkv[src + C];
            A.v[dst] = A.qkv[src + 2 * C];
          }
    const auto att = attention_forward(std::span<const double>(A.q), std::span<const double>(A.k),
                                       std::span<const double>(A.v), shape);
    A.y.resize(N * C);
    for (size_t b = 0; b < B; ++b)
      for (size_t t = 0; t < T; ++t)
        for (size_t h = 0; h < H; ++h)
          for (size_t d = 0; d < D; ++d) A.y[(b * T + t) * C + h * D + d] = att.o[((b * H + h) * T + t) * D + d];
    Vec proj(N * C);
    linear(proj.data(), A.y.data(), P + o.proj_w, P + o.proj_b, N, C, C);
    A.x2.resize(N * C);
    for (size_t i = 0; i < N * C; ++i) A.x2[i] = A.x[i] + proj[i];
    A.m.resize(N * C), A.m_mean.resize(N), A.m_rstd.resize(N);
    layernorm(A.m.data(), A.m_mean.data(), A.m_rstd.data(), A.x2.data(), P + o.ln2_w, P + o.ln2_b, N, C);
    A.f.resize(N * F);
    linear(A.f.data(), A.m.data(), P + o.fc_w, P + o.fc_b, N, F, C);
    A.h.resize(N * F);
    for (size_t i = 0; i < N * F; ++i) A.h[i] = gelu(A.f[i]);
    Vec down(N * C);
    linear(down.data(), A.h.data(), P + o.fcproj_w, P + o.fcproj_b, N, C, F);
    for (size_t i = 0; i < N * C; ++i) x[i] = A.x2[i] + down[i];
  }
  Vec lnf(N * C), lnf_mean(N), lnf_rstd(N);
  layernorm(lnf.data(), lnf_mean.data(), lnf_rstd.data(), x.data(), P + L.lnf_w, P + L.lnf_b, N, C);
  Vec logits(N * Vp);
  linear(logits.data(), lnf.data(), P + L.wte, nullptr, N, Vp, C);
  GptRefResult result;
  Vec dlogits(N * Vp, 0.0);
  const double inv_n = 1.0 / static_cast<double>(N);
  for (size_t i = 0; i < N; ++i) {
    const double* row = logits.data() + i * Vp;
    const double mx = *std::max_element(row, row + V);
    double sum = 0.0;
    for (size_t j = 0; j < V; ++j) sum += std::exp(row[j] - mx);
    const double lse = mx + std::log(sum);
    const auto target = static_cast<size_t>(targets[i]);
    result.loss += (lse - row[target]) * inv_n;
    for (size_t j = 0; j < V; ++j) dlogits[i * Vp + j] = (std::exp(row[j] - lse) - (j == target ? 1.0 : 0.0)) * inv_n;
  }
  if (!backward) return result;

  // ---- backward ----
  Vec& G = result.grads;
  G.assign(L.total, 0.0);
  Vec dlnf(N * C);
  linear_backward(dlnf.data(), G.data() + L.wte, nullptr, dlogits.data(), lnf.data(), P + L.wte, N, Vp, C);
  Vec dx(N * C, 0.0);  // gradient of the residual stream
  layernorm_backward(dx.data(), G.data() + L.lnf_w, G.data() + L.lnf_b, dlnf.data(), x.data(), P + L.lnf_w,
                     lnf_mean.data(), lnf_rstd.data(), N, C);
  for (size_t l = L.layer.size(); l-- > 0;) {
    const LayerOffsets& o = L.layer[l];
    const LayerActs& A = acts[l];
    // x3 = x2 + h Wfcproj^T + b: dx2 = dx (+ the LN2 path below).
    Vec dh(N * F);
    linear_backward(dh.data(), G.data() + o.fcproj_w, G.data() + o.fcproj_b, dx.data(), A.h.data(), P + o.fcproj_w, N,
                    C, F);
    for (size_t i = 0; i < N * F; ++i) dh[i] *= gelu_derivative(A.f[i]);
    Vec dm(N * C);
    linear_backward(dm.data(), G.data() + o.fc_w, G.data() + o.fc_b, dh.data(), A.m.data(), P + o.fc_w, N, F, C);
    layernorm_backward(dx.data(), G.data() + o.ln2_w, G.data() + o.ln2_b, dm.data(), A.x2.data(), P + o.ln2_w,
                       A.m_mean.data(), A.m_rstd.data(), N, C);
    // x2 = x + y Wproj^T + b: dx = dx2 (+ the LN1 path below).
    Vec dy(N * C);
    linear_backward(dy.data(), G.data() + o.proj_w, G.data() + o.proj_b, dx.data(), A.y.data(), P + o.proj_w, N, C,
                    C);
    Vec dout(N * C);
    for (size_t b = 0; b < B; ++b)
      for (size_t t = 0; t < T; ++t)
        for (size_t h = 0; h < H; ++h)
          for (size_t d = 0; d < D; ++d) dout[((b * H + h) * T + t) * D + d] = dy[(b * T + t) * C + h * D + d];
    const auto g = attention_backward(std::span<const double>(A.q), std::span<const double>(A.k),
                                      std::span<const double>(A.v), std::span<const double>(dout), shape);
    Vec dqkv(N * 3 * C);
    for (size_t b = 0; b < B; ++b)
      for (size_t t = 0; t < T; ++t)
        for (size_t h = 0; h < H; ++h)
          for (size_t d = 0; d < D; ++d) {
            const size_t dst = (b * T + t) * 3 * C + h * D + d, src = ((b * H + h) * T + t) * D + d;
            dqkv[dst] = g.dq[src];
            dqkv[dst + C] = g.dk[src];
            dqkv[dst + 2 * C] = g.dv[src];
          }
    Vec da(N * C);
    linear_backward(da.data(), G.data() + o.qkv_w, G.data() + o.qkv_b, dqkv.data(), A.a.data(), P + o.qkv_w, N,
                    3 * C, C);
    layernorm_backward(dx.data(), G.data() + o.ln1_w, G.data() + o.ln1_b, da.data(), A.x.data(), P + o.ln1_w,
                       A.a_mean.data(), A.a_rstd.data(), N, C);
  }
  for (size_t b = 0; b < B; ++b)
    for (size_t t = 0; t < T; ++t)
      for (size_t c = 0; c < C; ++c) {
        const double g = dx[(b * T + t) * C + c];
        G[L.wte + static_cast<size_t>(tokens[b * T + t]) * C + c] += g;
        G[L.wpe + t * C + c] += g;
      }
  return result;
}

}  // namespace trainsim::kernels::ref
