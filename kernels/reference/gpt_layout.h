#pragma once
// The GPT-2-style model shared by the CPU fp64 reference (gpt_ref.h) and trainsim-train:
// its shape, the order of its parameter tensors in one flat array, and its initialization.
//
// Flat parameter order (each tensor row-major, linear weights [out, in] as torch.nn.Linear):
//   wte (Vp, C)  wpe (T, C)
//   per layer l = 0..L-1, contiguous:
//     ln1_w (C) ln1_b (C) qkv_w (3C, C) qkv_b (3C) proj_w (C, C) proj_b (C)
//     ln2_w (C) ln2_b (C) fc_w (F, C) fc_b (F) fcproj_w (C, F) fcproj_b (C)
//   lnf_w (C) lnf_b (C)
// C = hidden, F = 4C, T = seq (max positions), Vp = the padded vocabulary. The LM head is
// tied to wte; wte rows V..Vp-1 are padding (initialized to zero, never looked up, and their
// logits are excluded from the loss, so their gradient stays zero).
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace trainsim::kernels::ref {

struct GptConfig {
  int layers = 0;
  int hidden = 0;      // C
  int heads = 0;       // H; head_dim = C / H
  int seq = 0;         // T, also the number of learned positions
  int vocab = 0;       // V, real tokens
  int padded_vocab = 0;  // Vp >= V: rows of wte and logits columns

  [[nodiscard]] int ffn() const { return 4 * hidden; }
  [[nodiscard]] int head_dim() const { return heads > 0 ? hidden / heads : 0; }
};

// Throws std::invalid_argument naming the field when the shape is not usable
// (non-positive sizes, hidden not divisible by heads, padded_vocab < vocab).
void check_config(const GptConfig& cfg);

// V rounded up to a multiple of `multiple` (64 or 128 keeps the LM-head GEMM on whole
// tensor-core tiles; 50257 -> 50304 with 128).
[[nodiscard]] int pad_vocab(int vocab, int multiple);

// Offsets (in elements) of each tensor in the flat array.
struct LayerOffsets {
  std::size_t ln1_w, ln1_b, qkv_w, qkv_b, proj_w, proj_b, ln2_w, ln2_b, fc_w, fc_b, fcproj_w, fcproj_b;
  std::size_t begin, end;  // the layer's contiguous range
};
struct GptLayout {
  std::size_t wte = 0, wpe = 0, lnf_w = 0, lnf_b = 0;
  std::vector<LayerOffsets> layer;
  std::size_t total = 0;
};
[[nodiscard]] GptLayout gpt_layout(const GptConfig& cfg);

// One named tensor per entry, in flat order (for checkpoints and error messages).
struct ParamTensor {
  std::string name;  // "wte", "layer3.fc_w", ...
  std::size_t offset = 0;
  std::size_t count = 0;
};
[[nodiscard]] std::vector<ParamTensor> gpt_tensors(const GptConfig& cfg);

// GPT-2 initialization (Radford et al. 2019, as nanoGPT/llm.c): linear and embedding
// weights N(0, 0.02), the two residual projections (proj_w, fcproj_w) N(0, 0.02/sqrt(2L)),
// biases 0, layernorm weights 1 and biases 0, wte padding rows 0. Normal deviates come from
// a splitmix64 stream and Box-Muller, so they are identical on every platform.
[[nodiscard]] std::vector<float> gpt_init(const GptConfig& cfg, std::uint64_t seed);

// splitmix64 (Steele et al. 2014): the project's portable random stream for the trainer.
struct SplitMix64 {
  std::uint64_t state;
  std::uint64_t next();
  double uniform();  // in (0, 1)
};

}  // namespace trainsim::kernels::ref
