#include "gpt_layout.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <stdexcept>
#include <thread>

namespace trainsim::kernels::ref {

void check_config(const GptConfig& c) {
  const auto need = [](bool ok, const char* what) {
    if (!ok) throw std::invalid_argument(std::string("GPT config: ") + what);
  };
  need(c.layers > 0, "layers must be positive");
  need(c.hidden > 0, "hidden must be positive");
  need(c.heads > 0, "heads must be positive");
  need(c.hidden % c.heads == 0, "hidden must be divisible by heads");
  need(c.seq > 0, "seq must be positive");
  need(c.vocab > 0, "vocab must be positive");
  need(c.padded_vocab >= c.vocab, "padded_vocab must be at least vocab");
}

int pad_vocab(int vocab, int multiple) {
  if (vocab <= 0 || multiple <= 0) throw std::invalid_argument("pad_vocab: vocab and multiple must be positive");
  return (vocab + multiple - 1) / multiple * multiple;
}

GptLayout gpt_layout(const GptConfig& c) {
  check_config(c);
  const auto C = static_cast<std::size_t>(c.hidden), F = static_cast<std::size_t>(c.ffn());
  GptLayout l;
  std::size_t at = 0;
  const auto take = [&](std::size_t n) {
    const std::size_t o = at;
    at += n;
    return o;
  };
  l.wte = take(static_cast<std::size_t>(c.padded_vocab) * C);
  l.wpe = take(static_cast<std::size_t>(c.seq) * C);
  for (int i = 0; i < c.layers; ++i) {
    LayerOffsets o{};
    o.begin = at;
    o.ln1_w = take(C);
    o.ln1_b = take(C);
    o.qkv_w = take(3 * C * C);
    o.qkv_b = take(3 * C);
    o.proj_w = take(C * C);
    o.proj_b = take(C);
    o.ln2_w = take(C);
    o.ln2_b = take(C);
    o.fc_w = take(F * C);
    o.fc_b = take(F);
    o.fcproj_w = take(C * F);
    o.fcproj_b = take(C);
    o.end = at;
    l.layer.push_back(o);
  }
  l.lnf_w = take(C);
  l.lnf_b = take(C);
  l.total = at;
  return l;
}

std::vector<ParamTensor> gpt_tensors(const GptConfig& c) {
  const GptLayout l = gpt_layout(c);
  const auto C = static_cast<std::size_t>(c.hidden), F = static_cast<std::size_t>(c.ffn());
  std::vector<ParamTensor> t{{"wte", l.wte, static_cast<std::size_t>(c.padded_vocab) * C},
                             {"wpe", l.wpe, static_cast<std::size_t>(c.seq) * C}};
  for (std::size_t i = 0; i < l.layer.size(); ++i) {
    const LayerOffsets& o = l.layer[i];
    const std::string p = "layer" + std::to_string(i) + ".";
    t.push_back({p + "ln1_w", o.ln1_w, C});
    t.push_back({p + "ln1_b", o.ln1_b, C});
    t.push_back({p + "qkv_w", o.qkv_w, 3 * C * C});
    t.push_back({p + "qkv_b", o.qkv_b, 3 * C});
    t.push_back({p + "proj_w", o.proj_w, C * C});
    t.push_back({p + "proj_b", o.proj_b, C});
    t.push_back({p + "ln2_w", o.ln2_w, C});
    t.push_back({p + "ln2_b", o.ln2_b, C});
    t.push_back({p + "fc_w", o.fc_w, F * C});
    t.push_back({p + "fc_b", o.fc_b, F});
    t.push_back({p + "fcproj_w", o.fcproj_w, C * F});
    t.push_back({p + "fcproj_b", o.fcproj_b, C});
  }
  t.push_back({"lnf_w", l.lnf_w, C});
  t.push_back({"lnf_b", l.lnf_b, C});
  return t;
}

std::uint64_t SplitMix64::next() {
  std::uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

double SplitMix64::uniform() { return (static_cast<double>(next() >> 11) + 0.5) * 0x1.0p-53; }

namespace {
constexpr std::uint64_t kSplitMixGamma = 0x9E3779B97F4A7C15ULL;
}  // namespace

std::vector<float> gpt_init(const GptConfig& c, std::uint64_t seed) {
  const GptLayout l = gpt_layout(c);
  std::vector<float> p(l.total, 0.0f);
  // One splitmix64 stream from `seed`, two draws per deviate, tensors in flat order. The
  // stream's state only advances by a constant, so the k-th draw is SplitMix64{seed + (k-1)
  // gamma}.next() and large tensors are filled by several threads with the same values as
  // one sequential pass (a GPT-2 774M init took minutes on one core).
  std::uint64_t draws = 0;  // draws taken so far
  const auto normal = [&](std::size_t off, std::size_t n, double sd) {
    const std::uint64_t first = draws;
    const auto fill = [&p, off, sd, seed, first](std::size_t begin, std::size_t end) {
      SplitMix64 rng{seed + (first + 2 * static_cast<std::uint64_t>(begin)) * kSplitMixGamma};
      for (std::size_t i = begin; i < end; ++i) {
        const double u1 = rng.uniform(), u2 = rng.uniform();
        p[off + i] = static_cast<float>(sd * std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2));
      }
    };
    constexpr std::size_t kPerThread = std::size_t{1} << 20;
    const std::size_t threads =
        std::min<std::size_t>({n / kPerThread, std::max(1u, std::thread::hardware_concurrency()), 64});
    if (threads <= 1) {
      fill(0, n);
    } else {
      std::vector<std::thread> pool;
      for (std::size_t t = 0; t < threads; ++t) pool.emplace_back(fill, n * t / threads, n * (t + 1) / threads);
      for (std::thread& th : pool) th.join();
    }
    draws += 2 * static_cast<std::uint64_t>(n);
  };
  const auto ones = [&](std::size_t off, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) p[off + i] = 1.0f;
  };
  const auto C = static_cast<std::size_t>(c.hidden), F = static_cast<std::size_t>(c.ffn());
  const double residual_sd = 0.02 / std::sqrt(2.0 * c.layers);
  normal(l.wte, static_cast<std::size_t>(c.vocab) * C, 0.02);  // padding rows stay 0
  normal(l.wpe, static_cast<std::size_t>(c.seq) * C, 0.02);
  for (const LayerOffsets& o : l.layer) {
    ones(o.ln1_w, C);
    normal(o.qkv_w, 3 * C * C, 0.02);
    normal(o.proj_w, C * C, residual_sd);
    ones(o.ln2_w, C);
    normal(o.fc_w, F * C, 0.02);
    normal(o.fcproj_w, C * F, residual_sd);
  }
  ones(l.lnf_w, C);
  return p;
}

}  // namespace trainsim::kernels::ref
