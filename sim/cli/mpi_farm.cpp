#include "cli/mpi_farm.h"

#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "sweep/chunk_board.h"
#include "sweep/reliability.h"
#include "sweep/result_codec.h"

namespace trainsim::sweep::mpi {

namespace {

constexpr int kTagRequest = 1;  // worker -> root: the results of its last chunk (empty at first)
constexpr int kTagWork = 2;     // root -> worker: [phase, point index...]; [] : stop

[[noreturn]] void abort_all(const std::string& what) {
  std::cerr << "error: " << what << '\n';
  MPI_Abort(MPI_COMM_WORLD, 1);
  std::abort();
}

double now_s() {
  using clock = std::chrono::steady_clock;
  static const clock::time_point start = clock::now();
  return std::chrono::duration<double>(clock::now() - start).count();
}

// The results of `indices` in `phase`, computed here.
std::vector<PointResult> compute(const config::SweepSpec& spec, std::span<const Point> points, Phase phase,
                                 std::span<const std::size_t> indices, Threads threads) {
  if (phase == Phase::kEvaluate) {
    std::vector<Point> chunk;
    for (std::size_t i : indices) chunk.push_back(points[i]);
    return evaluate_points(spec, chunk, threads.evaluate);
  }
  std::vector<PointResult> out(indices.size());
  const std::size_t first[] = {0};
  for (std::size_t k = 0; k < indices.size(); ++k)
    replay_points(spec, points.subspan(indices[k], 1), std::span(&out[k], 1), first, threads.replay);
  return out;
}

// The fault-injection seam of the dead-rank test (tests/integration/sweep_mpi_survives.cmake):
// TRAINSIM_SWEEP_FAULT="kill@R:N" makes rank R end itself with SIGKILL when its Nth
// chunk arrives, holding it. Returns that N for this rank (0: never).
int chunk_to_die_at() {
  const char* text = std::getenv("TRAINSIM_SWEEP_FAULT");
  if (text == nullptr) return 0;
  int rank = -1, n = 0;
  if (std::sscanf(text, "kill@%d:%d", &rank, &n) != 2)
    abort_all(std::string("TRAINSIM_SWEEP_FAULT=") + text + ": expected kill@RANK:CHUNK");
  int me = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  return me == rank ? n : 0;
}

}  // namespace

void serve(const config::SweepSpec& spec, std::span<const Point> points, Threads threads) {
  const int die_at = chunk_to_die_at();
  std::vector<std::uint8_t> bytes;
  for (int received = 1;; ++received) {
    MPI_Send(bytes.data(), static_cast<int>(bytes.size()), MPI_BYTE, 0, kTagRequest, MPI_COMM_WORLD);
    MPI_Status status;
    if (MPI_Probe(0, kTagWork, MPI_COMM_WORLD, &status) != MPI_SUCCESS) return;  // rank 0 is gone
    int count = 0;
    MPI_Get_count(&status, MPI_UINT64_T, &count);
    std::vector<std::uint64_t> work(static_cast<std::size_t>(count));
    MPI_Recv(work.data(), count, MPI_UINT64_T, 0, kTagWork, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (work.empty()) return;
    if (received == die_at) std::raise(SIGKILL);
    const auto phase = static_cast<Phase>(work[0]);
    if (phase != Phase::kEvaluate && phase != Phase::kReplay) abort_all("sweep: work of an unknown kind");
    std::vector<std::size_t> indices(work.begin() + 1, work.end());
    for (std::size_t i : indices)
      if (i >= points.size()) abort_all("sweep: work for a point that does not exist");
    try {
      bytes = encode_results(compute(spec, points, phase, indices, threads));
    } catch (const std::exception& e) {
      abort_all(e.what());
    }
  }
}

struct Dispatcher::Impl {
  // What rank 0 knows of one worker.
  struct Worker {
    bool alive = true;
    bool parked = false;     // its request received and not yet answered
    bool stopped = false;    // told to stop
    std::uint64_t run = 0;   // the run() its chunk belongs to; 0: it holds none
    std::size_t chunk = 0;
    double started_s = 0.0;  // when that chunk was handed out
  };

  const config::SweepSpec& spec;
  std::span<const Point> points;
  Threads threads;
  int size;
  std::vector<Worker> workers;  // by rank; [0] unused
  std::uint64_t run_id = 0;
  double late_after_s = ChunkBoard::kMinLateS;
  bool finished = false;

  // Receives one request, if one is waiting: its rank and the results it carries.
  std::optional<std::pair<int, std::vector<std::uint8_t>>> receive() {
    int flag = 0;
    MPI_Status status;
    MPI_Iprobe(MPI_ANY_SOURCE, kTagRequest, MPI_COMM_WORLD, &flag, &status);
    if (flag == 0) return std::nullopt;
    int count = 0;
    MPI_Get_count(&status, MPI_BYTE, &count);
    std::vector<std::uint8_t> bytes(static_cast<std::size_t>(count));
    const int source = status.MPI_SOURCE;
    if (MPI_Recv(bytes.data(), count, MPI_BYTE, source, kTagRequest, MPI_COMM_WORLD, MPI_STATUS_IGNORE) !=
        MPI_SUCCESS) {
      workers[static_cast<std::size_t>(source)].alive = false;
      return std::nullopt;
    }
    Worker& w = workers[static_cast<std::size_t>(source)];
    w.parked = true;
    return std::pair{source, std::move(bytes)};
  }

  // Hands a chunk of `board` to every parked worker while there are chunks to hand
  // out (`take` gives one, under the caller's lock); a worker that cannot be sent
  // to is counted dead and its chunk abandoned.
  void hand_out(Phase phase, std::span<const std::size_t> indices, std::uint64_t run_id_now, const ChunkBoard& board,
                const std::function<std::optional<std::size_t>()>& take,
                const std::function<void(std::size_t)>& abandon) {
    for (int r = 1; r < size; ++r) {
      Worker& w = workers[static_cast<std::size_t>(r)];
      if (!w.alive || !w.parked) continue;
      const std::optional<std::size_t> c = take();
      if (!c) return;
      const ChunkBoard::Chunk& range = board.chunk(*c);
      std::vector<std::uint64_t> message{static_cast<std::uint64_t>(phase)};
      for (std::size_t k = range.begin; k < range.end; ++k) message.push_back(indices[k]);
      w.run = run_id_now;
      w.chunk = *c;
      w.started_s = now_s();
      if (!send(r, message)) {
        w.run = 0;
        abandon(*c);
      }
    }
  }

  // Sends `message` to parked worker `rank`; false (and the worker counted dead) if it cannot be sent.
  bool send(int rank, const std::vector<std::uint64_t>& message) {
    Worker& w = workers[static_cast<std::size_t>(rank)];
    w.parked = false;
    if (MPI_Send(message.data(), static_cast<int>(message.size()), MPI_UINT64_T, rank, kTagWork, MPI_COMM_WORLD) ==
        MPI_SUCCESS)
      return true;
    w.alive = false;
    return false;
  }
};

Dispatcher::Dispatcher(const Session& session, const config::SweepSpec& spec, std::span<const Point> points,
                       Threads threads)
    : impl_(std::make_unique<Impl>(Impl{spec, points, threads, session.size(), {}, 0, ChunkBoard::kMinLateS, false})) {
  impl_->workers.resize(static_cast<std::size_t>(session.size()));
}

Dispatcher::~Dispatcher() { finish(); }

void Dispatcher::run(Phase phase, std::span<const std::size_t> indices, const Arrived& arrived,
                     const std::function<bool()>& stop, const std::function<void(std::size_t)>& progress) {
  Impl& d = *impl_;
  const std::uint64_t id = ++d.run_id;
  // Evaluations: about eight chunks per rank and thread, at most 64 points each
  // (small chunks balance the load, large ones save messages). Replays: one each.
  const std::size_t chunk =
      phase == Phase::kReplay
          ? 1
          : std::clamp<std::size_t>(indices.size() / (8 * static_cast<std::size_t>(d.size) *
                                                      static_cast<std::size_t>(std::max(1, d.threads.evaluate))),
                                    1, 64);
  ChunkBoard board(indices.size(), chunk);
  std::mutex mutex;  // the board, `arrived` and `done`
  std::size_t done = 0;
  const auto deliver = [&](std::size_t c, double started_s, std::vector<PointResult>&& part) {
    if (!board.finish(c, started_s, now_s())) return;  // a copy that came second
    const ChunkBoard::Chunk& range = board.chunk(c);
    if (part.size() != range.end - range.begin) abort_all("sweep: a rank returned the wrong number of results");
    for (std::size_t k = range.begin; k < range.end; ++k) arrived(indices[k], std::move(part[k - range.begin]));
    done += range.end - range.begin;
  };
  std::atomic<bool> stopping{false};
  std::exception_ptr local_failure;  // read after `failed` is set, or after the join
  std::atomic<bool> failed{false};
  std::jthread local([&] {
    try {
      for (;;) {
        std::optional<std::size_t> c;
        double started_s = 0.0;
        {
          const std::lock_guard lock(mutex);
          if (stopping || board.all_finished()) return;
          started_s = now_s();
          c = board.take(started_s);
        }
        if (!c) {
          std::this_thread::sleep_for(std::chrono::milliseconds(5));
          continue;
        }
        const ChunkBoard::Chunk range = board.chunk(*c);
        std::vector<PointResult> part =
            compute(d.spec, d.points, phase, indices.subspan(range.begin, range.end - range.begin), d.threads);
        const std::lock_guard lock(mutex);
        deliver(*c, started_s, std::move(part));
      }
    } catch (...) {
      local_failure = std::current_exception();
      failed = true;
    }
  });
  auto last_progress = now_s();
  for (;;) {
    if (!stopping && stop && stop()) stopping = true;
    if (failed) break;
    {
      const std::lock_guard lock(mutex);
      if (board.all_finished() || (stopping && board.only_late_left(now_s()))) break;
    }
    if (!stopping)
      d.hand_out(
          phase, indices, id, board,
          [&] {
            const std::lock_guard lock(mutex);
            return board.take(now_s());
          },
          [&](std::size_t c) {
            const std::lock_guard lock(mutex);
            board.abandon(c);
          });
    if (auto request = d.receive()) {
      Impl::Worker& w = d.workers[static_cast<std::size_t>(request->first)];
      // Results of this run's chunk count; an earlier run's (a stopped one) are dropped.
      if (w.run == id) {
        std::vector<PointResult> part = decode_results(request->second);
        const std::lock_guard lock(mutex);
        deliver(w.chunk, w.started_s, std::move(part));
      }
      w.run = 0;
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    if (progress && now_s() - last_progress > 0.1) {
      const std::lock_guard lock(mutex);
      progress(done);
      last_progress = now_s();
    }
  }
  stopping = true;
  local.join();
  if (local_failure) std::rethrow_exception(local_failure);
  d.late_after_s = std::max(d.late_after_s, board.late_after_s());
  if (progress) progress(done);
}

void Dispatcher::finish() {
  Impl& d = *impl_;
  if (d.finished) return;
  d.finished = true;
  const double deadline = now_s() + d.late_after_s;
  const auto waiting = [&] {
    for (int r = 1; r < d.size; ++r)
      if (d.workers[static_cast<std::size_t>(r)].alive && !d.workers[static_cast<std::size_t>(r)].stopped)
        return true;
    return false;
  };
  while (waiting() && now_s() < deadline) {
    for (int r = 1; r < d.size; ++r) {
      Impl::Worker& w = d.workers[static_cast<std::size_t>(r)];
      if (w.alive && w.parked && !w.stopped) w.stopped = d.send(r, {});
    }
    if (!d.receive()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  for (int r = 1; r < d.size; ++r) {
    const Impl::Worker& w = d.workers[static_cast<std::size_t>(r)];
    if (!w.stopped)
      std::cerr << "note: rank " << r << " did not ask for work within " << d.late_after_s
                << " s of the end: presumed dead; every point it held was computed by another rank\n";
  }
}

bool launched_by_mpi() {
  for (const char* var : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "MPI_LOCALNRANKS"})
    if (std::getenv(var) != nullptr) return true;
  return false;
}

Session::Session(int* argc, char*** argv) {
  int provided = 0;
  // Only the main thread calls MPI; rank 0's evaluation thread does not.
  MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
}

void Session::finalize(int status) {
  if (finalized_) return;
  finalized_ = true;
  std::thread([status] {
    std::this_thread::sleep_for(std::chrono::seconds(kFinalizeTimeoutS));
    std::cerr << "note: MPI_Finalize did not return within " << kFinalizeTimeoutS
              << " s (a rank is dead); ending without it, every output is written\n";
    std::fflush(nullptr);
    std::_Exit(status);
  }).detach();
  MPI_Finalize();
}

Session::~Session() { finalize(1); }

}  // namespace trainsim::sweep::mpi
