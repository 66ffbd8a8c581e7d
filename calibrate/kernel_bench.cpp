#include "kernel_bench.h"

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include "attention_ref.h"
#include "device_fill.h"
#include "elementwise_ref.h"
#include "fp8_ref.h"
#include "trainsim/kernels/attention.h"
#include "trainsim/kernels/cuda_check.h"
#include "trainsim/kernels/device_buffer.h"
#include "trainsim/kernels/elementwise.h"
#include "trainsim/kernels/fp8.h"

namespace trainsim::calibrate {

namespace {

using kernels::DeviceBuffer;
using bf16 = __nv_bfloat16;
using Shape = nlohmann::json;

// `sets` copies of a buffer of `count` elements; at(i) is copy i mod sets.
template <typename T>
class Rotating {
 public:
  Rotating(std::size_t count, int sets, kernels::GemmDtype fill, std::uint32_t seed, cudaStream_t stream)
      : count_(count), sets_(sets), data_(count * static_cast<std::size_t>(sets)) {
    fill_random(data_.get(), data_.size(), fill, seed, stream);
  }
  T* at(int i) const { return data_.get() + static_cast<std::size_t>(i % sets_) * count_; }

 private:
  std::size_t count_;
  int sets_;
  DeviceBuffer<T> data_;
};

// Copies of the working set needed to exceed twice the L2 (at most 16).
int sets_for(double bytes) {
  int device = 0, l2 = 0;
  TRAINSIM_CUDA_CHECK(cudaGetDevice(&device));
  TRAINSIM_CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device));
  return std::clamp(static_cast<int>(2.0 * l2 / std::max(bytes, 1.0)) + 1, 1, 16);
}

void record(BenchContext& ctx, const std::string& name, Shape shape, double bytes, double flops,
            const std::function<void(int)>& work) {
  if (ctx.stopped()) return;
  ctx.measure("kernels", "kernels " + name + " " + shape.dump(), [&] {
    TimingOptions o;
    o.target_seconds = 0.02;
    const Timing t = ctx.timer->time(work, o);
    const double gbps = bytes / t.median_s / 1e9;
    std::fprintf(ctx.log, "%22s %40s %14.0f %11.2f %9.1f %9.1f\n", name.c_str(), shape.dump().c_str(), bytes,
                 t.median_s * 1e6, gbps, flops / t.median_s / 1e12);
    return nlohmann::json{{"name", name},         {"shape", shape},       {"bytes", bytes},
                          {"flops", flops},       {"seconds", t.median_s}, {"repeats", t.repeats},
                          {"distribution_s", distribution_json(t)}};
  });
}

void bench_layernorm(BenchContext& ctx, int rows, int cols) {
  const auto n = static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols);
  const auto ur = static_cast<std::size_t>(rows), uc = static_cast<std::size_t>(cols);
  const double fwd = static_cast<double>(kernels::ref::layernorm_forward_bytes(rows, cols));
  const int sets = sets_for(fwd);
  Rotating<bf16> inp(n, sets, kernels::GemmDtype::kBf16, 11u, ctx.stream), dout(n, sets, kernels::GemmDtype::kBf16, 12u, ctx.stream);
  DeviceBuffer<bf16> out(n), w(uc), b(uc), dinp(n);
  DeviceBuffer<float> mean(ur), rstd(ur), dw(uc), db(uc);
  fill_random(w.get(), uc, kernels::GemmDtype::kBf16, 13u, ctx.stream);
  fill_random(b.get(), uc, kernels::GemmDtype::kBf16, 14u, ctx.stream);
  const std::size_t ws_bytes = kernels::layernorm_backward_workspace_bytes(rows, cols);
  DeviceBuffer<unsigned char> ws(std::max<std::size_t>(ws_bytes, 1));
  const Shape shape{{"rows", rows}, {"cols", cols}};
  record(ctx, "layernorm_forward", shape, fwd, 0.0, [&](int i) {
    kernels::layernorm_forward(out.get(), mean.get(), rstd.get(), inp.at(i), w.get(), b.get(), rows, cols, ctx.stream);
  });
  record(ctx, "layernorm_backward", shape, static_cast<double>(kernels::ref::layernorm_backward_bytes(rows, cols)),
         0.0, [&](int i) {
           kernels::layernorm_backward(dinp.get(), dw.get(), db.get(), dout.at(i), inp.at(i), w.get(), mean.get(),
                                       rstd.get(), ws.get(), ws_bytes, rows, cols, ctx.stream);
         });
}

void bench_pointwise(BenchContext& ctx, std::size_t n) {
  const double bytes = static_cast<double>(kernels::ref::gelu_forward_bytes(n));
  const int sets = sets_for(bytes);
  Rotating<bf16> a(n, sets, kernels::GemmDtype::kBf16, 21u, ctx.stream), b(n, sets, kernels::GemmDtype::kBf16, 22u, ctx.stream);
  DeviceBuffer<bf16> out(n);
  const Shape shape{{"n", n}};
  record(ctx, "gelu_forward", shape, bytes, 0.0,
         [&](int i) { kernels::gelu_forward(out.get(), a.at(i), n, ctx.stream); });
  record(ctx, "gelu_backward", shape, static_cast<double>(kernels::ref::gelu_backward_bytes(n)), 0.0,
         [&](int i) { kernels::gelu_backward(out.get(), a.at(i), b.at(i), n, ctx.stream); });
  record(ctx, "residual_forward", shape, static_cast<double>(kernels::ref::residual_forward_bytes(n)), 0.0,
         [&](int i) { kernels::residual_forward(out.get(), a.at(i), b.at(i), n, ctx.stream); });
}

void bench_embedding(BenchContext& ctx, int batch, int seq, int channels, int vocab) {
  const auto tokens = static_cast<std::size_t>(batch) * static_cast<std::size_t>(seq);
  const auto uc = static_cast<std::size_t>(channels);
  DeviceBuffer<bf16> wte(static_cast<std::size_t>(vocab) * uc), wpe(static_cast<std::size_t>(seq) * uc),
      out(tokens * uc), dout(tokens * uc);
  DeviceBuffer<float> dwte(static_cast<std::size_t>(vocab) * uc), dwpe(static_cast<std::size_t>(seq) * uc);
  fill_random(wte.get(), wte.size(), kernels::GemmDtype::kBf16, 31u, ctx.stream);
  fill_random(wpe.get(), wpe.size(), kernels::GemmDtype::kBf16, 32u, ctx.stream);
  fill_random(dout.get(), dout.size(), kernels::GemmDtype::kBf16, 33u, ctx.stream);
  // Token ids: a fixed pseudo-random sequence over the vocabulary.
  std::vector<int> host(tokens);
  std::uint32_t x = 12345u;
  for (int& t : host) {
    x = x * 1664525u + 1013904223u;
    t = static_cast<int>(x % static_cast<std::uint32_t>(vocab));
  }
  DeviceBuffer<int> ids(tokens);
  ids.upload(host);
  const std::size_t ws_bytes = kernels::embedding_backward_workspace_bytes(batch, seq, vocab);
  DeviceBuffer<unsigned char> ws(std::max<std::size_t>(ws_bytes, 1));
  const Shape shape{{"batch", batch}, {"seq", seq}, {"channels", channels}, {"vocab", vocab}};
  record(ctx, "embedding_forward", shape,
         static_cast<double>(kernels::ref::embedding_forward_bytes(batch, seq, channels, true)), 0.0, [&](int) {
           kernels::embedding_forward(out.get(), ids.get(), wte.get(), wpe.get(), batch, seq, channels, vocab,
                                      ctx.stream);
         });
  record(ctx, "embedding_backward", shape,
         static_cast<double>(kernels::ref::embedding_backward_bytes(batch, seq, channels, vocab, true)), 0.0,
         [&](int) {
           kernels::embedding_backward(dwte.get(), dwpe.get(), dout.get(), ids.get(), ws.get(), ws_bytes, batch, seq,
                                       channels, vocab, ctx.stream);
         });
}

void bench_softmax_xent(BenchContext& ctx, int rows, int vocab) {
  const int padded = (vocab + 63) / 64 * 64;
  const auto n = static_cast<std::size_t>(rows) * static_cast<std::size_t>(padded);
  DeviceBuffer<bf16> logits(n), dlogits(n);
  DeviceBuffer<float> losses(static_cast<std::size_t>(rows));
  fill_random(logits.get(), n, kernels::GemmDtype::kBf16, 41u, ctx.stream);
  std::vector<int> host(static_cast<std::size_t>(rows));
  for (std::size_t i = 0; i < host.size(); ++i) host[i] = static_cast<int>((i * 7919u) % static_cast<std::size_t>(vocab));
  DeviceBuffer<int> targets(host.size());
  targets.upload(host);
  record(ctx, "softmax_cross_entropy", Shape{{"rows", rows}, {"vocab", vocab}, {"padded_vocab", padded}},
         static_cast<double>(kernels::ref::softmax_cross_entropy_bytes(rows, vocab, padded)), 0.0, [&](int) {
           kernels::softmax_cross_entropy(losses.get(), dlogits.get(), logits.get(), targets.get(), rows, vocab,
                                          padded, 1.0F / static_cast<float>(rows), ctx.stream);
         });
}

void bench_adamw(BenchContext& ctx, std::size_t n) {
  DeviceBuffer<float> p(n), m(n), v(n), g(n);
  DeviceBuffer<bf16> p16(n);
  fill_random(p.get(), n, kernels::GemmDtype::kFp32, 51u, ctx.stream);
  fill_random(g.get(), n, kernels::GemmDtype::kFp32, 52u, ctx.stream);
  TRAINSIM_CUDA_CHECK(cudaMemsetAsync(m.get(), 0, n * sizeof(float), ctx.stream));
  TRAINSIM_CUDA_CHECK(cudaMemsetAsync(v.get(), 0, n * sizeof(float), ctx.stream));
  record(ctx, "adamw", Shape{{"n", n}}, static_cast<double>(kernels::ref::adamw_bytes(n)), 0.0, [&](int i) {
    kernels::adamw_step(p.get(), p16.get(), m.get(), v.get(), g.get(), n, 1e-4F, 0.9F, 0.95F, 1e-8F, 0.1F, i + 1,
                        ctx.stream);
  });
}

void bench_attention(BenchContext& ctx, kernels::AttentionShape s) {
  const std::size_t n = static_cast<std::size_t>(s.batch) * static_cast<std::size_t>(s.heads) *
                        static_cast<std::size_t>(s.seq) * static_cast<std::size_t>(s.head_dim);
  const std::size_t rows = n / static_cast<std::size_t>(s.head_dim);
  // Q, K, V, O and dO rotate beyond the L2 (distinct random values each), as in a
  // training step where they come from the previous kernels, not from the cache.
  const kernels::ref::AttentionShape rs{s.batch, s.heads, s.seq, s.head_dim};
  const int sets = sets_for(static_cast<double>(5 * n * sizeof(bf16)));
  Rotating<bf16> q(n, sets, kernels::GemmDtype::kBf16, 61u, ctx.stream), k(n, sets, kernels::GemmDtype::kBf16, 62u, ctx.stream),
      v(n, sets, kernels::GemmDtype::kBf16, 63u, ctx.stream), o(n, sets, kernels::GemmDtype::kBf16, 64u, ctx.stream),
      dout(n, sets, kernels::GemmDtype::kBf16, 65u, ctx.stream);
  DeviceBuffer<bf16> dq(n), dk(n), dv(n);
  DeviceBuffer<float> lse(rows);
  const std::size_t ws_bytes = kernels::attention_backward_workspace_bytes(s);
  DeviceBuffer<unsigned char> ws(std::max<std::size_t>(ws_bytes, 1));
  const Shape shape{{"batch", s.batch}, {"heads", s.heads}, {"seq", s.seq}, {"head_dim", s.head_dim}};
  record(ctx, "attention_forward", shape, kernels::ref::attention_forward_bytes(rs),
         kernels::ref::attention_forward_flops(rs),
         [&](int i) { kernels::attention_forward(q.at(i), k.at(i), v.at(i), o.at(i), lse.get(), s, ctx.stream); });
  record(ctx, "attention_backward", shape, kernels::ref::attention_backward_bytes(rs),
         kernels::ref::attention_backward_flops(rs), [&](int i) {
           kernels::attention_backward(q.at(i), k.at(i), v.at(i), o.at(i), dout.at(i), lse.get(), dq.get(), dk.get(),
                                       dv.get(), ws.get(), s, ctx.stream);
         });
}

// Transformer Engine's FP8 casts (fp8.h): E4M3 as its forward casts run; E5M2 gradients
// cost the same bytes. amax accumulates over the repetitions, as over a step's casts.
void bench_fp8_cast(BenchContext& ctx, int rows, int cols) {
  const auto n = static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols);
  const int sets = sets_for(static_cast<double>(kernels::ref::fp8_cast_transpose_bytes(n)));
  Rotating<bf16> in(n, sets, kernels::GemmDtype::kBf16, 71u, ctx.stream);
  DeviceBuffer<unsigned char> out(n), out_t(n);
  DeviceBuffer<float> amax_scale(2);
  const float init[2] = {0.0F, 1.0F};  // amax, scale
  TRAINSIM_CUDA_CHECK(cudaMemcpyAsync(amax_scale.get(), init, sizeof init, cudaMemcpyHostToDevice, ctx.stream));
  TRAINSIM_CUDA_CHECK(cudaStreamSynchronize(ctx.stream));
  float* amax = amax_scale.get();
  const float* scale = amax_scale.get() + 1;
  record(ctx, "fp8_cast", Shape{{"n", n}}, static_cast<double>(kernels::ref::fp8_cast_bytes(n)), 0.0, [&](int i) {
    kernels::fp8_cast(out.get(), amax, in.at(i), scale, n, kernels::Fp8Format::kE4M3, ctx.stream);
  });
  record(ctx, "fp8_cast_transpose", Shape{{"rows", rows}, {"cols", cols}},
         static_cast<double>(kernels::ref::fp8_cast_transpose_bytes(n)), 0.0, [&](int i) {
           kernels::fp8_cast_transpose(out.get(), out_t.get(), amax, in.at(i), scale, rows, cols,
                                       kernels::Fp8Format::kE4M3, ctx.stream);
         });
}

}  // namespace

void bench_kernels(BenchContext& ctx) {
  std::fprintf(ctx.log, "# our kernels: median of repeats, inputs rotating beyond the L2\n");
  std::fprintf(ctx.log, "#                 name                                    shape          bytes    "
                        "time(us)      GB/s   TFLOP/s\n");
  for (int rows : {2048, 8192, 32768})
    for (int cols : {768, 1024, 1280, 1600, 2048, 4096, 8192}) bench_layernorm(ctx, rows, cols);
  for (std::size_t n = std::size_t{1} << 18; n <= std::size_t{1} << 30; n *= 4) bench_pointwise(ctx, n);
  for (int batch : {1, 4, 16})
    for (int channels : {768, 1280, 4096}) bench_embedding(ctx, batch, 1024, channels, 50257);
  for (int rows : {1024, 4096, 8192, 16384}) bench_softmax_xent(ctx, rows, 50257);
  bench_softmax_xent(ctx, 8192, 32000);
  bench_softmax_xent(ctx, 8192, 128256);
  for (std::size_t n = std::size_t{1} << 20; n <= std::size_t{1} << 28; n *= 4) bench_adamw(ctx, n);
  for (kernels::AttentionShape s : {kernels::AttentionShape{16, 12, 512, 64}, {8, 12, 1024, 64}, {8, 16, 1024, 64},
                                    {8, 20, 1024, 64}, {8, 25, 1024, 64}, {4, 16, 2048, 64}, {2, 32, 2048, 128},
                                    {1, 32, 4096, 128}, {1, 32, 8192, 128}, {8, 8, 1024, 128}})
    bench_attention(ctx, s);
  for (int rows : {2048, 8192, 32768})
    for (int cols : {1024, 4096, 8192, 16384}) bench_fp8_cast(ctx, rows, cols);
  ctx.profile->flush();
}

}  // namespace trainsim::calibrate
