#pragma once
// trainsim-train's options, their checks and the learning-rate schedule (plain C++,
// tested on CPU in tests/kernels/trainer_host_test.cpp).
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpt_layout.h"

namespace trainsim::trainer {

struct TrainOptions {
  // model
  int layers = 12;
  int hidden = 768;
  int heads = 12;
  int seq = 1024;
  int vocab = 256;          // byte-level tokens; a larger value only widens the LM head (shape runs)
  int vocab_multiple = 128; // the LM head's rows are padded up to a multiple of this
  // batch
  int micro_batch = 8;
  int grad_accum = 1;
  int gpus = 0;             // 0: every local GPU
  // schedule
  int steps = 50;
  int stop_at = 0;          // stop after this many steps (0: --steps), keeping --steps' schedule
  int warmup_steps = 8;     // excluded from the step-time statistics
  double lr = 6e-4;
  int lr_warmup = 10;       // linear warm-up steps of the learning rate
  double min_lr_ratio = 0.1;
  double weight_decay = 0.1;
  double beta1 = 0.9;
  double beta2 = 0.95;
  double eps = 1e-8;
  std::uint64_t seed = 1234;
  // data
  std::string data;         // a byte file; the last held_out_fraction of it is held out
  double held_out_fraction = 0.05;
  int eval_interval = 0;    // 0: evaluate only at the end
  int eval_batches = 8;     // micro-batches of held-out windows per evaluation
  // checkpoints
  std::string checkpoint;   // path; empty: none
  int checkpoint_interval = 0;  // 0: only at the end (when a path is given)
  bool resume = false;
  // output
  std::string out = "RUN.json";
  bool timeline = true;
  double bucket_mb = 25.0;  // gradient all-reduce bucket size (MiB of fp32 gradients)
  std::string command;      // the command line, as run

  [[nodiscard]] kernels::ref::GptConfig model() const;
};

// A command line CLI11 could not parse (an unknown option, a missing value): the
// program exits with 2, as trainsim and trainsim-calibrate do.
class UsageError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// Parses argv (CLI11). Returns false when the caller should exit (help printed); throws
// UsageError for a command line it cannot parse, std::invalid_argument naming the
// option on a bad value.
bool parse_options(int argc, char** argv, TrainOptions& o);

// Throws std::invalid_argument naming the option when the combination is not usable:
// sizes positive, hidden % heads == 0, head_dim 64 or 128 (the flash kernels), hidden % 128,
// vocab >= 256 (byte tokens), steps > warmup_steps, 0 < held_out_fraction < 1.
void check_options(const TrainOptions& o);

// Learning rate of step s (0-based): linear warm-up lr (s+1)/W for s < W, then cosine
// decay from lr to min_lr_ratio lr over the remaining steps (nanoGPT's schedule).
[[nodiscard]] double learning_rate(const TrainOptions& o, int step);

}  // namespace trainsim::trainer
