#include "cli/mpi_farm.h"

#include <mpi.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <mutex>
#include <numeric>
#include <thread>

#include "sweep/reliability.h"
#include "sweep/result_codec.h"

namespace trainsim::sweep::mpi {

namespace {

constexpr int kTagRequest = 1;  // worker -> root: the results of its last chunk (empty at first)
constexpr int kTagWork = 2;     // root -> worker: [begin, end) of its next chunk; begin == end: stop
constexpr int kTagReplay = 3;   // worker -> root: its replayed points, in selection order

// Hands out [begin, end) ranges of point indices, to rank 0's own thread and to the workers.
class Dispenser {
 public:
  Dispenser(std::size_t total, std::size_t chunk) : total_(total), chunk_(chunk) {}
  std::array<std::uint64_t, 2> next() {
    const std::lock_guard lock(mutex_);
    const std::size_t begin = next_;
    next_ = std::min(total_, next_ + chunk_);
    return {begin, next_};
  }

 private:
  std::mutex mutex_;
  std::size_t total_;
  std::size_t chunk_;
  std::size_t next_ = 0;
};

[[noreturn]] void abort_all(const std::string& what) {
  std::cerr << "error: " << what << '\n';
  MPI_Abort(MPI_COMM_WORLD, 1);
  std::abort();
}

std::vector<PointResult> root(const Session& session, const config::SweepSpec& spec, std::span<const Point> points,
                              int threads, const std::function<void(std::size_t)>& progress, const Arrived& arrived) {
  const std::size_t workers = static_cast<std::size_t>(session.size() - 1);
  // Small chunks balance the load; large ones save messages. Each rank gets about
  // eight chunks per thread, at most 64 points each.
  const std::size_t chunk = std::clamp<std::size_t>(
      points.size() / (8 * static_cast<std::size_t>(session.size()) * static_cast<std::size_t>(threads)), 1, 64);
  Dispenser dispenser(points.size(), chunk);
  std::vector<PointResult> results(points.size());
  std::atomic<std::size_t> done{0};
  std::exception_ptr local_failure;
  std::jthread local([&] {
    try {
      for (;;) {
        const auto [b, e] = dispenser.next();
        if (b >= e) break;
        std::vector<PointResult> part = evaluate_points(spec, points.subspan(b, e - b), threads);
        std::move(part.begin(), part.end(), results.begin() + static_cast<std::ptrdiff_t>(b));
        if (arrived)
          for (std::size_t i = b; i < e; ++i) arrived(i, results[i]);
        done += e - b;
      }
    } catch (...) {
      local_failure = std::current_exception();
    }
  });
  std::vector<std::array<std::uint64_t, 2>> outstanding(workers + 1, {0, 0});
  std::size_t active = workers;
  auto last_progress = std::chrono::steady_clock::now();
  while (active > 0) {
    int flag = 0;
    MPI_Status status;
    MPI_Iprobe(MPI_ANY_SOURCE, kTagRequest, MPI_COMM_WORLD, &flag, &status);
    if (flag == 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    } else {
      int count = 0;
      MPI_Get_count(&status, MPI_BYTE, &count);
      std::vector<std::uint8_t> bytes(static_cast<std::size_t>(count));
      MPI_Recv(bytes.data(), count, MPI_BYTE, status.MPI_SOURCE, kTagRequest, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      const auto worker = static_cast<std::size_t>(status.MPI_SOURCE);
      const auto [b, e] = outstanding[worker];
      if (e > b) {
        std::vector<PointResult> part = decode_results(bytes);
        if (part.size() != e - b) abort_all("sweep: a worker returned the wrong number of results");
        std::move(part.begin(), part.end(), results.begin() + static_cast<std::ptrdiff_t>(b));
        if (arrived)
          for (std::size_t i = b; i < e; ++i) arrived(i, results[i]);
        done += e - b;
      }
      const std::array<std::uint64_t, 2> work = dispenser.next();
      outstanding[worker] = work;
      if (work[0] == work[1]) --active;
      MPI_Send(work.data(), 2, MPI_UINT64_T, status.MPI_SOURCE, kTagWork, MPI_COMM_WORLD);
    }
    const auto now = std::chrono::steady_clock::now();
    if (progress && now - last_progress > std::chrono::milliseconds(100)) {
      progress(done.load());
      last_progress = now;
    }
  }
  local.join();
  if (local_failure) std::rethrow_exception(local_failure);
  if (progress) progress(done.load());
  return results;
}

void worker(const config::SweepSpec& spec, std::span<const Point> points, int threads) {
  std::vector<std::uint8_t> bytes;
  for (;;) {
    MPI_Send(bytes.data(), static_cast<int>(bytes.size()), MPI_BYTE, 0, kTagRequest, MPI_COMM_WORLD);
    std::array<std::uint64_t, 2> work{};
    MPI_Recv(work.data(), 2, MPI_UINT64_T, 0, kTagWork, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (work[0] >= work[1] || work[1] > points.size()) return;
    bytes = encode_results(evaluate_points(spec, points.subspan(work[0], work[1] - work[0]), threads));
  }
}

}  // namespace

void broadcast_indices(std::vector<std::size_t>& indices) {
  std::vector<std::uint64_t> wire(indices.begin(), indices.end());
  std::uint64_t count = wire.size();
  MPI_Bcast(&count, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  wire.resize(count);
  if (count > 0) MPI_Bcast(wire.data(), static_cast<int>(count), MPI_UINT64_T, 0, MPI_COMM_WORLD);
  indices.assign(wire.begin(), wire.end());
}

void replay(const Session& session, const config::SweepSpec& spec, std::span<const Point> points,
            std::vector<PointResult>& results, std::span<const std::size_t> rank0_selection, int threads,
            const Arrived& arrived) {
  std::vector<std::uint64_t> selection;
  if (session.rank() == 0) selection.assign(rank0_selection.begin(), rank0_selection.end());
  std::uint64_t count = selection.size();
  MPI_Bcast(&count, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  if (count == 0) return;
  selection.resize(count);
  MPI_Bcast(selection.data(), static_cast<int>(count), MPI_UINT64_T, 0, MPI_COMM_WORLD);
  const auto size = static_cast<std::size_t>(session.size());
  const auto rank = static_cast<std::size_t>(session.rank());
  // This rank's share: selection[k] for k = rank, rank + size, ...
  std::vector<std::size_t> mine;
  for (std::size_t k = rank; k < selection.size(); k += size) {
    if (selection[k] >= points.size()) abort_all("sweep: a replay of a point that does not exist");
    mine.push_back(static_cast<std::size_t>(selection[k]));
  }
  if (rank == 0) {
    replay_points(spec, points, results, mine, threads, {}, [&](std::size_t i) {
      if (arrived) arrived(i, results[i]);
    });
    for (std::size_t worker = 1; worker < size && worker < selection.size(); ++worker) {
      MPI_Status status;
      MPI_Probe(static_cast<int>(worker), kTagReplay, MPI_COMM_WORLD, &status);
      int bytes_count = 0;
      MPI_Get_count(&status, MPI_BYTE, &bytes_count);
      std::vector<std::uint8_t> bytes(static_cast<std::size_t>(bytes_count));
      MPI_Recv(bytes.data(), bytes_count, MPI_BYTE, static_cast<int>(worker), kTagReplay, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
      const std::vector<PointResult> part = decode_results(bytes);
      std::size_t j = 0;
      for (std::size_t k = worker; k < selection.size(); k += size, ++j) {
        if (j >= part.size()) abort_all("sweep: a worker returned too few replays");
        PointResult& r = results[static_cast<std::size_t>(selection[k])];
        r.reliability = part[j].reliability;
        r.replay_error = part[j].replay_error;
        if (arrived) arrived(static_cast<std::size_t>(selection[k]), r);
      }
    }
    return;
  }
  if (mine.empty()) return;
  // A worker replays into results of its own; only the replay fields travel back.
  std::vector<PointResult> local(points.size());
  try {
    replay_points(spec, points, local, mine, threads);
  } catch (const std::exception& e) {
    abort_all(e.what());
  }
  std::vector<PointResult> part;
  for (std::size_t i : mine) part.push_back(std::move(local[i]));
  const std::vector<std::uint8_t> bytes = encode_results(part);
  MPI_Send(bytes.data(), static_cast<int>(bytes.size()), MPI_BYTE, 0, kTagReplay, MPI_COMM_WORLD);
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
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
}

Session::~Session() { MPI_Finalize(); }

std::vector<PointResult> farm(const Session& session, const config::SweepSpec& spec, std::span<const Point> points,
                              int threads, const std::function<void(std::size_t)>& progress, const Arrived& arrived) {
  if (session.size() == 1) {
    std::vector<PointResult> results(points.size());
    std::vector<std::size_t> all(points.size());
    std::iota(all.begin(), all.end(), std::size_t{0});
    evaluate_listed(
        spec, points, all, threads, results, [&](std::size_t i) { if (arrived) arrived(i, results[i]); }, progress);
    return results;
  }
  if (session.rank() == 0) return root(session, spec, points, threads, progress, arrived);
  try {
    worker(spec, points, threads);
  } catch (const std::exception& e) {
    abort_all(e.what());
  }
  return {};
}

}  // namespace trainsim::sweep::mpi
