#pragma once
// Gradient buckets for the data-parallel all-reduce. The flat gradient array follows
// gpt_layout.h (wte, wpe, layer 0 .. L-1, lnf); backward finishes lnf and layer L-1 first
// and the embeddings last, so buckets are contiguous ranges cut at layer boundaries from
// the end: each holds whole layers (the last one also lnf) until it reaches the bucket
// size, and a final bucket holds wte and wpe (finished by the embedding backward; the LM
// head's share of dwte is done before any layer). A bucket is launched as soon as the
// backward of its lowest layer has run on the last micro-batch.
#include <cstddef>
#include <vector>

#include "gpt_layout.h"

namespace trainsim::trainer {

struct GradBucket {
  std::size_t begin = 0, end = 0;  // elements of the flat gradient array
  int ready_after_layer = -1;      // the layer whose backward completes it; -1: the embedding backward
};

// Buckets in launch order. bucket_elements > 0.
[[nodiscard]] std::vector<GradBucket> plan_buckets(const kernels::ref::GptLayout& layout, std::size_t bucket_elements);

}  // namespace trainsim::trainer
