#pragma once
// The MPI task farm of `trainsim sweep` and `plan` (docs/sweep.md, "MPI"): part of
// the command-line driver, built only with the MPI part (TRAINSIM_WITH_MPI); the
// simulator library never includes MPI. Rank 0 hands out chunks of point indices
// on request (sweep::ChunkBoard), computes chunks itself on a second thread and
// collects every result; the other ranks compute what they are handed. All ranks
// enumerate the same points from the same spec.
//
// Stopping: rank 0 alone decides (a signal, --stop-after): it hands out nothing
// more, waits for the chunks in flight and tells the workers to stop.
// A dead rank: under `mpirun --enable-recovery` (docs/sweep.md) the job outlives
// it; its chunk turns late and is computed again by the next rank to ask, so the
// run finishes with every result. Without it, MPI ends the job, and the journal
// and --resume go on from what reached rank 0.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "sweep/evaluate.h"

namespace trainsim::sweep::mpi {

// True when this process was started by an MPI launcher (mpirun, srun).
bool launched_by_mpi();

// MPI_Init_thread (funneled) and MPI_Finalize. Errors on MPI_COMM_WORLD are
// returned, not fatal, so that rank 0 outlives a dead worker.
class Session {
 public:
  static constexpr int kFinalizeTimeoutS = 10;

  Session(int* argc, char*** argv);
  ~Session();  // finalize(1) unless finalize() ran
  // MPI_Finalize; if it has not returned after kFinalizeTimeoutS, the process
  // ends with `status` without it. With a rank dead, Open MPI 4.1's closing fence
  // sometimes waits forever (about 1 run in 10 here); every output is written by
  // then, so nothing is lost.
  void finalize(int status);
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;
  [[nodiscard]] int rank() const { return rank_; }
  [[nodiscard]] int size() const { return size_; }

 private:
  int rank_ = 0;
  int size_ = 1;
  bool finalized_ = false;
};

enum class Phase : std::uint64_t {
  kEvaluate = 1,  // the points' results
  kReplay = 2,    // their full-run replays under failures (reliability, replay_error)
};

// The ranks' thread counts: evaluations, and each replay's Monte Carlo.
struct Threads {
  int evaluate = 1;
  int replay = 1;
};

// The other ranks: compute what rank 0 hands out until it says stop.
void serve(const config::SweepSpec& spec, std::span<const Point> points, Threads threads);

// Called on rank 0 with the index (into `points`) and first result of each point
// computed, one call at a time.
using Arrived = std::function<void(std::size_t index, PointResult&& result)>;

// Rank 0's side: hands out chunks and computes some itself.
class Dispatcher {
 public:
  Dispatcher(const Session& session, const config::SweepSpec& spec, std::span<const Point> points, Threads threads);
  ~Dispatcher();  // finish()
  Dispatcher(const Dispatcher&) = delete;
  Dispatcher& operator=(const Dispatcher&) = delete;

  // Computes points[i] for every i of `indices` in `phase` over all ranks, until
  // every one has arrived or `stop()` (then the chunks in flight are waited for,
  // except those of ranks presumed dead). `progress(arrived so far)` on the way.
  void run(Phase phase, std::span<const std::size_t> indices, const Arrived& arrived,
           const std::function<bool()>& stop = {}, const std::function<void(std::size_t)>& progress = {});
  // Tells every worker to stop, waiting for those still computing up to the
  // lateness bound, and names on stderr the ranks presumed dead. Idempotent.
  void finish();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace trainsim::sweep::mpi
