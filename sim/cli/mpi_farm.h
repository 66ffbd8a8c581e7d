#pragma once
// The MPI task farm of `trainsim sweep` (docs/sweep.md, "MPI"): part of the
// command-line driver, built only with the MPI part (TRAINSIM_WITH_MPI); the
// simulator library never includes MPI. Rank 0 hands out chunks of point
// indices on request, evaluates chunks itself on its other thread, and collects
// every result; all ranks enumerate the same points from the same spec.
#include <cstddef>
#include <functional>
#include <span>
#include <vector>

#include "sweep/evaluate.h"

namespace trainsim::sweep::mpi {

// True when this process was started by an MPI launcher (mpirun, srun).
bool launched_by_mpi();

// MPI_Init_thread (funneled) and MPI_Finalize.
class Session {
 public:
  Session(int* argc, char*** argv);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;
  [[nodiscard]] int rank() const { return rank_; }
  [[nodiscard]] int size() const { return size_; }

 private:
  int rank_ = 0;
  int size_ = 1;
};

// Evaluates `points` over every rank, `threads` threads each. Returns all the
// results in the order of `points` on rank 0 and nothing on the others.
// `progress(done)` runs on rank 0 only.
std::vector<PointResult> farm(const Session& session, const config::SweepSpec& spec, std::span<const Point> points,
                              int threads, const std::function<void(std::size_t)>& progress);

// Under failures: rank 0's `selection` (replay_selection() of its `results`;
// ignored on the other ranks, whose `results` are empty) is broadcast and
// replayed across the ranks, the k-th point on rank k mod size with `threads`
// threads, and rank 0 collects each replay into `results`. Each replay is the
// same Monte Carlo on whichever rank runs it, so the output equals one process's.
void replay(const Session& session, const config::SweepSpec& spec, std::span<const Point> points,
            std::vector<PointResult>& results, std::span<const std::size_t> selection, int threads);

}  // namespace trainsim::sweep::mpi
