// The trainer's layout moves (kernels/trainer/trainer_kernels.h) against the index maps
// they implement, element for element (a move changes no bits): qkv (B, T, 3, H, D) ->
// q, k, v (B, H, T, D) and back, o (B, H, T, D) -> y (B, T, H, D) and back. Head sizes 64
// and 8 take the 16-byte vector kernels, 12 and an offset tensor the element ones;
// outputs are poisoned first so an unwritten element fails.
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "gpu_available.h"
#include "trainer_kernels.h"
#include "trainsim/kernels/device_buffer.h"

namespace {

using bf16 = __nv_bfloat16;
using trainsim::kernels::DeviceBuffer;

struct Shape {
  int B, T, H, D;
  std::size_t offset;  // elements the tensors start after their allocation (unaligned when % 8 != 0)
};

std::vector<std::uint16_t> bits_of(const std::vector<bf16>& v) {
  std::vector<std::uint16_t> b(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) b[i] = __bfloat16_as_ushort(v[i]);
  return b;
}

class TrainerLayout : public ::testing::TestWithParam<Shape> {};

TEST_P(TrainerLayout, MovesEveryElementToItsPlace) {
  TRAINSIM_REQUIRE_GPU();
  const auto [B, T, H, D, off] = GetParam();
  const std::size_t n = static_cast<std::size_t>(B) * static_cast<std::size_t>(T) * static_cast<std::size_t>(H) *
                      static_cast<std::size_t>(D),
                    C = static_cast<std::size_t>(H) * static_cast<std::size_t>(D);
  std::mt19937 rng(std::random_device{}());
  std::uniform_int_distribution<int> bits(0, 0x7F7F);  // finite bf16 values, any pattern
  std::vector<bf16> qkv(3 * n);
  for (bf16& x : qkv) x = __ushort_as_bfloat16(static_cast<unsigned short>(bits(rng)));
  // Device tensors `off` elements into their allocations; outputs poisoned (0xFF).
  DeviceBuffer<bf16> d_qkv(3 * n + off), d_heads(3 * n + off), d_back(3 * n + off), d_y(n + off), d_o(n + off);
  for (auto* b : {&d_heads, &d_back, &d_y, &d_o}) b->fill_bytes(0xFF);
  std::vector<bf16> padded(3 * n + off);
  std::copy(qkv.begin(), qkv.end(), padded.begin() + static_cast<std::ptrdiff_t>(off));
  d_qkv.upload(padded);
  bf16* q = d_heads.get() + off;
  trainsim::trainer::permute_qkv(q, q + n, q + 2 * n, d_qkv.get() + off, B, T, H, D, nullptr);
  trainsim::trainer::unpermute_qkv(d_back.get() + off, q, q + n, q + 2 * n, B, T, H, D, nullptr);
  trainsim::trainer::heads_to_rows(d_y.get() + off, q, B, T, H, D, nullptr);     // q's heads as rows
  trainsim::trainer::rows_to_heads(d_o.get() + off, d_y.get() + off, B, T, H, D, nullptr);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const auto heads = bits_of(d_heads.download()), back = bits_of(d_back.download()), y = bits_of(d_y.download()),
             o = bits_of(d_o.download()), in = bits_of(qkv);
  std::size_t wrong = 0;
  const auto UB = static_cast<std::size_t>(B), UT = static_cast<std::size_t>(T), UH = static_cast<std::size_t>(H),
             UD = static_cast<std::size_t>(D);
  for (std::size_t b = 0; b < UB; ++b)
    for (std::size_t t = 0; t < UT; ++t)
      for (std::size_t h = 0; h < UH; ++h)
        for (std::size_t d = 0; d < UD; ++d) {
          const std::size_t head = ((b * UH + h) * UT + t) * UD + d;
          const std::size_t row = (b * UT + t) * C + h * UD + d;
          for (std::size_t s = 0; s < 3; ++s) {
            const std::size_t packed = (b * UT + t) * 3 * C + s * C + h * UD + d;
            wrong += heads[off + s * n + head] != in[packed];
            wrong += back[off + packed] != in[packed];
          }
          wrong += y[off + row] != in[(b * UT + t) * 3 * C + h * UD + d];
          wrong += o[off + head] != heads[off + head];
        }
  EXPECT_EQ(wrong, 0u);
}

INSTANTIATE_TEST_SUITE_P(Shapes, TrainerLayout,
                         ::testing::Values(Shape{2, 37, 3, 64, 0}, Shape{1, 5, 4, 8, 0}, Shape{2, 9, 2, 12, 0},
                                           Shape{2, 33, 2, 64, 1}),
                         [](const auto& p) {
                           return "B" + std::to_string(p.param.B) + "_T" + std::to_string(p.param.T) + "_H" +
                                  std::to_string(p.param.H) + "_D" + std::to_string(p.param.D) + "_offset" +
                                  std::to_string(p.param.offset);
                         });

}  // namespace
