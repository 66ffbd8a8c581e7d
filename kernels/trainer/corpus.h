#pragma once
// The training text: bytes are the tokens (vocabulary 256). The last `held_out_fraction`
// of the file (rounded up to whole bytes) is the held-out split, never trained on.
//
// Training windows: sequence b of micro-batch a of step s on rank r starts at a byte drawn
// from splitmix64 seeded by (seed, s, a, r, b), so a resumed run sees the same batches.
// Held-out windows: consecutive, non-overlapping T+1-byte windows from the split's start.
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

namespace trainsim::trainer {

class Corpus {
 public:
  // Throws std::runtime_error naming the file when it cannot be read, and when either
  // split is shorter than one window of seq + 1 bytes.
  Corpus(const std::filesystem::path& path, double held_out_fraction, int seq);
  Corpus(std::vector<unsigned char> bytes, double held_out_fraction, int seq, std::string name);

  [[nodiscard]] std::size_t train_bytes() const { return split_; }
  [[nodiscard]] std::size_t held_out_bytes() const { return bytes_.size() - split_; }
  // Held-out windows available (each seq + 1 bytes, non-overlapping).
  [[nodiscard]] std::size_t held_out_windows() const;

  // Fills tokens and targets, each (batch, seq): targets are tokens shifted by one.
  void train_batch(std::uint64_t seed, int step, int micro, int rank, int batch, std::span<int> tokens,
                   std::span<int> targets) const;
  // Windows first .. first + batch - 1 of the held-out split.
  void held_out_batch(std::size_t first, int batch, std::span<int> tokens, std::span<int> targets) const;

 private:
  void fill(std::size_t start, std::size_t row, std::span<int> tokens, std::span<int> targets) const;
  std::vector<unsigned char> bytes_;
  std::size_t split_ = 0;
  int seq_ = 0;
  std::string name_;
};

}  // namespace trainsim::trainer
