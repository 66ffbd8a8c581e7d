#pragma once
// torchtitan's selective op activation checkpointing (recompute_granularity
// "selective_op"; docs/model.md, "Recomputation"). Its policy, per transformer
// block and per pass (torchtitan/parallelisms/parallelize_llama.py @9dec370,
// _apply_ac_to_transformer_block and _save_list; the same at 820504e and
// e7c0cae): save the outputs of aten.mm, of the SDPA flash and efficient
// kernels, of the reduce-scatter collective and of max / abs (fp8 scales),
// except every second aten.mm in the block's forward order; every other op is
// recomputed before the block's backward.
//
// trainsim fuses linears a Llama block runs apart (wq, wk, wv: one QKV GEMM;
// w1, w3: one up-projection GEMM), so the block's aten.mm calls are listed here
// in torchtitan's order (Attention.forward: wq, wk, wv, then wo; FeedForward:
// w2(silu(w1(x)) * w3(x))), grouped by the trainsim GEMM they are part of.
#include <cstddef>
#include <vector>

#include "workload/model_config.h"

namespace trainsim::workload {

// One aten.mm of the block on one rank: y[tokens x out] = x[tokens x in] W.
struct BlockLinear {
  double in = 0.0;
  double out = 0.0;
  bool saved = false;  // its output is saved (an odd position in the block's mm order)
};

// The block's aten.mm calls, grouped by trainsim's GEMMs of layer_forward in
// their order: {QKV: wq, wk, wv}, {attention output: wo}, {MLP up: w1, w3 with
// SwiGLU, else fc1}, {MLP down: w2 or fc2}; widths split over `tensor` ranks as
// the column- and row-parallel linears split them. Dense, non-MLA layers only
// (the scenario reader refuses the others).
[[nodiscard]] std::vector<std::vector<BlockLinear>> op_sac_block_linears(const ModelConfig& m, double tensor);

}  // namespace trainsim::workload
