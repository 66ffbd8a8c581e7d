#include "options.h"

#include <CLI/CLI.hpp>
#include <cmath>
#include <numbers>
#include <stdexcept>

namespace trainsim::trainer {

kernels::ref::GptConfig TrainOptions::model() const {
  return kernels::ref::GptConfig{layers, hidden, heads, seq, vocab, kernels::ref::pad_vocab(vocab, vocab_multiple)};
}

bool parse_options(int argc, char** argv, TrainOptions& o) {
  CLI::App app{"trainsim-train: train a GPT-2-style decoder on our kernels and write a measured run (RUN.json)"};
  app.add_option("--layers", o.layers, "transformer blocks");
  app.add_option("--hidden", o.hidden, "hidden size C (ffn is 4C)");
  app.add_option("--heads", o.heads, "attention heads (head_dim = hidden/heads must be 64 or 128)");
  app.add_option("--seq", o.seq, "sequence length T (also the learned positions)");
  app.add_option("--vocab", o.vocab, "vocabulary (256 = the byte tokens; larger only widens the LM head)");
  app.add_option("--vocab-multiple", o.vocab_multiple, "pad the LM head's rows to a multiple of this");
  app.add_option("--micro-batch", o.micro_batch, "sequences per GPU per micro-batch");
  app.add_option("--grad-accum", o.grad_accum, "micro-batches accumulated per step");
  app.add_option("--gpus", o.gpus, "GPUs to use (0: all local GPUs), one data-parallel rank each");
  app.add_option("--steps", o.steps, "optimizer steps (total, counting resumed ones)");
  app.add_option("--stop-at", o.stop_at, "stop after this many steps, keeping the --steps schedule (0: --steps)");
  app.add_option("--warmup-steps", o.warmup_steps, "first steps left out of the timing statistics");
  app.add_option("--lr", o.lr, "peak learning rate");
  app.add_option("--lr-warmup", o.lr_warmup, "linear learning-rate warm-up steps, then cosine decay");
  app.add_option("--min-lr-ratio", o.min_lr_ratio, "final learning rate as a fraction of --lr");
  app.add_option("--weight-decay", o.weight_decay, "AdamW weight decay (every tensor)");
  app.add_option("--seed", o.seed, "initialization and batch-sampling seed");
  app.add_option("--data", o.data, "training text (bytes are the tokens)")->required();
  app.add_option("--held-out", o.held_out_fraction, "fraction at the end of the data held out");
  app.add_option("--eval-interval", o.eval_interval, "held-out loss every N steps (0: at the end only)");
  app.add_option("--eval-batches", o.eval_batches, "micro-batches of held-out windows per evaluation");
  app.add_option("--checkpoint", o.checkpoint, "checkpoint file (written atomically)");
  app.add_option("--checkpoint-interval", o.checkpoint_interval, "save every N steps (0: at the end)");
  app.add_flag("--resume", o.resume, "continue from --checkpoint");
  app.add_option("-o,--out", o.out, "measured run file (RUN.json)");
  app.add_option("--timeline", o.timeline, "write RUN.timeline.json (true/false)");
  app.add_option("--bucket-mb", o.bucket_mb, "gradient all-reduce bucket size in MiB");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    app.exit(e);
    return false;
  } catch (const CLI::ParseError& e) {
    throw UsageError(e.what());
  }
  o.command.clear();
  for (int i = 0; i < argc; ++i) o.command += (i ? " " : "") + std::string(argv[i]);
  check_options(o);
  return true;
}

void check_options(const TrainOptions& o) {
  const auto need = [](bool ok, const std::string& what) {
    if (!ok) throw std::invalid_argument(what);
  };
  need(o.layers > 0, "--layers: expected a positive number");
  // Every tensor of the flat layout then starts on a 256-byte boundary (offsets are
  // multiples of C elements), the alignment cuBLASLt's heuristic assumes by default.
  need(o.hidden > 0 && o.hidden % 128 == 0, "--hidden: expected a positive multiple of 128");
  need(o.heads > 0 && o.hidden % o.heads == 0, "--heads: expected a divisor of --hidden");
  need(o.heads > 0 && (o.hidden / o.heads == 64 || o.hidden / o.heads == 128),
       "--heads: hidden/heads (head_dim) must be 64 or 128 for the flash kernels");
  need(o.seq > 0, "--seq: expected a positive number");
  need(o.vocab >= 256, "--vocab: expected at least 256 (the byte tokens)");
  need(o.vocab_multiple > 0 && o.vocab_multiple % 8 == 0, "--vocab-multiple: expected a positive multiple of 8");
  need(o.micro_batch > 0, "--micro-batch: expected a positive number");
  need(o.grad_accum > 0, "--grad-accum: expected a positive number");
  need(o.gpus >= 0, "--gpus: expected 0 (all) or a positive number");
  need(o.steps > 0, "--steps: expected a positive number");
  need(o.warmup_steps >= 0 && o.warmup_steps < o.steps, "--warmup-steps: expected 0 <= warmup-steps < steps");
  need(o.stop_at >= 0 && o.stop_at <= o.steps, "--stop-at: expected 0 (run all) or 1 .. --steps");
  need(o.lr > 0.0, "--lr: expected a positive number");
  need(o.lr_warmup >= 0, "--lr-warmup: expected a non-negative number");
  need(o.min_lr_ratio >= 0.0 && o.min_lr_ratio <= 1.0, "--min-lr-ratio: expected a value in [0, 1]");
  need(o.weight_decay >= 0.0, "--weight-decay: expected a non-negative number");
  need(o.held_out_fraction > 0.0 && o.held_out_fraction < 1.0, "--held-out: expected a fraction in (0, 1)");
  need(o.eval_interval >= 0, "--eval-interval: expected a non-negative number");
  need(o.eval_batches > 0, "--eval-batches: expected a positive number");
  need(o.checkpoint_interval >= 0, "--checkpoint-interval: expected a non-negative number");
  need(!o.resume || !o.checkpoint.empty(), "--resume: needs --checkpoint");
  need(o.bucket_mb > 0.0, "--bucket-mb: expected a positive number");
  need(!o.out.empty(), "--out: expected a file name");
}

double learning_rate(const TrainOptions& o, int step) {
  if (step < o.lr_warmup) return o.lr * (step + 1) / o.lr_warmup;
  const double min_lr = o.lr * o.min_lr_ratio;
  const int decay_steps = o.steps - o.lr_warmup;
  if (decay_steps <= 1) return o.lr;
  const double progress = static_cast<double>(step - o.lr_warmup) / (decay_steps - 1);
  return min_lr + 0.5 * (1.0 + std::cos(std::numbers::pi * progress)) * (o.lr - min_lr);
}

}  // namespace trainsim::trainer
