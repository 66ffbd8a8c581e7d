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

// Called on rank 0 with the index (into `points` of farm(), `results` of replay())
// of each point whose result has arrived there; from two threads at once in
// farm() (rank 0's own evaluations and the workers'), so it locks what it shares.
using Arrived = std::function<void(std::size_t index, const PointResult& result)>;

// Evaluates `points` over every rank, `threads` threads each. Returns all the
// results in the order of `points` on rank 0 and nothing on the others.
// `progress(done)` and `arrived` run on rank 0 only.
std::vector<PointResult> farm(const Session& session, const config::SweepSpec& spec, std::span<const Point> points,
                              int threads, const std::function<void(std::size_t)>& progress,
                              const Arrived& arrived = {});

// Rank 0's `indices`, given to every rank (the points a resumed sweep has left).
void broadcast_indices(std::vector<std::size_t>& indices);

// Under failures: rank 0's `selection` (replay_selection() of its `results`;
// ignored on the other ranks, whose `results` are empty) is broadcast and
// replayed across the ranks, the k-th point on rank k mod size with `threads`
// threads, and rank 0 collects each replay into `results`. Each replay is the
// same Monte Carlo on whichever rank runs it, so the output equals one process's.
void replay(const Session& session, const config::SweepSpec& spec, std::span<const Point> points,
            std::vector<PointResult>& results, std::span<const std::size_t> selection, int threads,
            const Arrived& arrived = {});

}  // namespace trainsim::sweep::mpi
