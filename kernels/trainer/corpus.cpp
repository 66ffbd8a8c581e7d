#include "corpus.h"

#include <cmath>
#include <fstream>
#include <iterator>
#include <stdexcept>

#include "gpt_layout.h"

namespace trainsim::trainer {

namespace {
std::vector<unsigned char> read_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path.string() + ": cannot open the training data");
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}
}  // namespace

Corpus::Corpus(const std::filesystem::path& path, double held_out_fraction, int seq)
    : Corpus(read_bytes(path), held_out_fraction, seq, path.string()) {}

Corpus::Corpus(std::vector<unsigned char> bytes, double held_out_fraction, int seq, std::string name)
    : bytes_(std::move(bytes)), seq_(seq), name_(std::move(name)) {
  const auto n = bytes_.size();
  const auto held = static_cast<std::size_t>(std::ceil(held_out_fraction * static_cast<double>(n)));
  split_ = n - std::min(held, n);
  const auto window = static_cast<std::size_t>(seq) + 1;
  if (split_ < window + 1)
    throw std::runtime_error(name_ + ": the training split has " + std::to_string(split_) +
                             " bytes, fewer than one window of seq + 1 = " + std::to_string(window) + " bytes");
  if (held_out_bytes() < window)
    throw std::runtime_error(name_ + ": the held-out split has " + std::to_string(held_out_bytes()) +
                             " bytes, fewer than one window of seq + 1 = " + std::to_string(window) + " bytes");
}

std::size_t Corpus::held_out_windows() const { return held_out_bytes() / (static_cast<std::size_t>(seq_) + 1); }

void Corpus::fill(std::size_t start, std::size_t row, std::span<int> tokens, std::span<int> targets) const {
  const auto T = static_cast<std::size_t>(seq_);
  for (std::size_t t = 0; t < T; ++t) {
    tokens[row * T + t] = bytes_[start + t];
    targets[row * T + t] = bytes_[start + t + 1];
  }
}

void Corpus::train_batch(std::uint64_t seed, int step, int micro, int rank, int batch, std::span<int> tokens,
                         std::span<int> targets) const {
  const auto T = static_cast<std::size_t>(seq_);
  if (tokens.size() != static_cast<std::size_t>(batch) * T || targets.size() != tokens.size())
    throw std::invalid_argument("Corpus::train_batch: spans must hold batch * seq tokens");
  const std::size_t starts = split_ - T;  // window [s, s + T] lies inside the training split
  for (int b = 0; b < batch; ++b) {
    kernels::ref::SplitMix64 rng{seed};
    for (const int k : {step, micro, rank, b}) rng.state ^= rng.next() + static_cast<std::uint64_t>(k);
    fill(rng.next() % starts, static_cast<std::size_t>(b), tokens, targets);
  }
}

void Corpus::held_out_batch(std::size_t first, int batch, std::span<int> tokens, std::span<int> targets) const {
  const auto T = static_cast<std::size_t>(seq_);
  if (tokens.size() != static_cast<std::size_t>(batch) * T || targets.size() != tokens.size())
    throw std::invalid_argument("Corpus::held_out_batch: spans must hold batch * seq tokens");
  if (first + static_cast<std::size_t>(batch) > held_out_windows())
    throw std::invalid_argument("Corpus::held_out_batch: past the last held-out window");
  for (int b = 0; b < batch; ++b)
    fill(split_ + (first + static_cast<std::size_t>(b)) * (T + 1), static_cast<std::size_t>(b), tokens, targets);
}

}  // namespace trainsim::trainer
