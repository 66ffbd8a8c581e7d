#!/usr/bin/env python3
"""The H100 preset's FlashAttention-2 attention_efficiency entry (head dim 128).

Source: Shah, Bikshandi, Zhang, Thakkar, Ramani & Dao, "FlashAttention-3: Fast and
Accurate Attention with Asynchrony and Low-precision", 2024 (arXiv 2407.08608),
section 4.1, on an H100 80GB SXM5 in bf16: batch x sequence = 16,384 tokens,
hidden 2,048 (16 heads of 128), the TFLOP/s printed above FlashAttention-2's bars
(the flash-attn 2 package; PyTorch SDPA's flash backend runs its kernels).

- Forward, causal mask, head dim 128 (Figure 5): FlashAttention-2 at sequences
  512 ... 16k, with the FLOPs counted as trainsim counts flash attention (the
  causal half, 2 b h s^2 d), so efficiency = TFLOP/s / 989.
- Backward, head dim 128 (Figure 6): published without a causal mask only. The
  causal backward is taken as the non-causal one scaled by the causal / non-causal
  ratio of the forward at the same sequence (Figure 5, head dim 128: 191/309 ...
  335/370): an assumption, the masked diagonal blocks cost the backward's tiles
  what they cost the forward's. Its FLOPs are trainsim's count, 2.5 x the causal
  forward's.

Prints the attention_efficiency entry as JSON (one line).
"""
import json

PEAK_TFLOPS = 989.0  # H100 SXM5 dense bf16 (the preset's peak)
TOKENS, HEADS, HEAD_DIM = 16384, 16, 128
SEQS = [512, 1024, 2048, 4096, 8192, 16384]
FWD_CAUSAL = [191, 260, 298, 319, 333, 335]      # Figure 5, causal, head dim 128
FWD_NONCAUSAL = [309, 350, 362, 368, 370, 370]   # Figure 5, no mask, head dim 128
BWD_NONCAUSAL = [214, 260, 291, 310, 318, 322]   # Figure 6, no mask, head dim 128


def forward_flops(seq):
    """trainsim's forward count: 2 b h s^2 d with b = tokens / s (the causal half of 4 b h s^2 d)."""
    return 2.0 * (TOKENS // seq) * HEADS * seq * seq * HEAD_DIM


def main():
    forward = [[forward_flops(s), round(t / PEAK_TFLOPS, 3)] for s, t in zip(SEQS, FWD_CAUSAL)]
    backward = []
    for s, bwd, causal, full in zip(SEQS, BWD_NONCAUSAL, FWD_CAUSAL, FWD_NONCAUSAL):
        backward.append([2.5 * forward_flops(s), round(bwd * causal / full / PEAK_TFLOPS, 3)])
    entry = {"head_dim": HEAD_DIM, "kernel": "flash2", "forward": forward, "backward": backward}
    print(json.dumps(entry))


if __name__ == "__main__":
    main()
