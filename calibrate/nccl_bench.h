#pragma once
// NCCL descriptors in the shape of nccl-tests: all_reduce, all_gather,
// reduce_scatter, all_to_all, broadcast, send_recv over sizes, on every local GPU
// from one process (ncclCommInitAll), or one GPU per MPI rank across nodes. Prints
// nccl-tests' columns (time, algbw, busbw, #wrong) and adds "collectives" rows.
#include <string>
#include <vector>

#include "bench_context.h"

namespace trainsim::calibrate {

struct NcclOptions {
  double min_bytes = 8;
  double max_bytes = 4.0 * (1ull << 30);
  double factor = 2;
  int warmup = 5;
  int iters = 20;
  bool check = true;
  std::vector<std::string> ops{"all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast", "send_recv"};
};

// One process, every visible GPU (ctx.stream is not used: each GPU gets its own).
void bench_nccl_local(BenchContext& ctx, const NcclOptions& options);

// One GPU per process across nodes (mpirun -np N trainsim-calibrate --nccl): rank 0
// makes the NCCL id and broadcasts it over MPI; each rank takes GPU
// (local rank mod GPUs per node). Only rank 0 prints and writes rows; the time of
// an iteration is the slowest rank's; #wrong sums over ranks. Scope is inter_node
// when the ranks run on more than one host (MPI_Get_processor_name), and "nodes"
// counts the distinct hosts when each runs as many ranks (left out otherwise).
// Built only with MPI (TRAINSIM_WITH_MPI).
void bench_nccl_mpi(BenchContext& ctx, const NcclOptions& options);

// NCCL's version as "2.28.3".
[[nodiscard]] std::string nccl_version();

}  // namespace trainsim::calibrate
