#include "nccl_bench.h"

#include <nccl.h>
#ifdef TRAINSIM_CALIBRATE_WITH_MPI
#include <mpi.h>
#endif

#include <algorithm>
#include <chrono>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "device_fill.h"
#include "nccl_tests_import.h"
#include "network/collective_kind.h"
#include "trainsim/kernels/cuda_check.h"
#include "trainsim/kernels/device_buffer.h"

namespace trainsim::calibrate {

namespace {

void check_nccl(ncclResult_t r, const char* what, const char* file, int line) {
  if (r != ncclSuccess) kernels::throw_cuda_error(what, ncclGetErrorString(r), file, line);
}
#define TRAINSIM_NCCL_CHECK(call) check_nccl((call), #call, __FILE__, __LINE__)

// One GPU's communicator, stream, buffers and error counter.
struct Rank {
  int device = 0;
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
  kernels::DeviceBuffer<float> send, recv;
  kernels::DeviceBuffer<unsigned long long> wrong;
};

// Elements each rank sends (count) for a collective moving `bytes` as nccl-tests
// sizes it: bytes is the larger of the send and receive buffers.
std::size_t send_count(const std::string& op, std::size_t elements, int n) {
  if (op == "all_gather") return elements / static_cast<std::size_t>(n);
  return elements;
}

// Float elements for a collective of about `bytes`: whole elements, divisible by
// the rank count where the collective splits them.
std::size_t element_count(const std::string& op, double bytes, int n) {
  const auto un = static_cast<std::size_t>(n);
  const std::size_t elements = std::max<std::size_t>(1, static_cast<std::size_t>(bytes) / sizeof(float));
  const auto kind = net::collective_from_name(op);
  if (kind && net::descriptor(*kind).split_among_ranks) return std::max<std::size_t>(un, elements / un * un);
  return elements;
}

void enqueue(const std::string& op, Rank& r, int rank, int n, std::size_t elements) {
  const std::size_t count = send_count(op, elements, n);
  if (op == "all_reduce") {
    TRAINSIM_NCCL_CHECK(ncclAllReduce(r.send.get(), r.recv.get(), count, ncclFloat, ncclSum, r.comm, r.stream));
  } else if (op == "all_gather") {
    TRAINSIM_NCCL_CHECK(ncclAllGather(r.send.get(), r.recv.get(), count, ncclFloat, r.comm, r.stream));
  } else if (op == "reduce_scatter") {
    TRAINSIM_NCCL_CHECK(ncclReduceScatter(r.send.get(), r.recv.get(), elements / static_cast<std::size_t>(n),
                                          ncclFloat, ncclSum, r.comm, r.stream));
  } else if (op == "broadcast") {
    TRAINSIM_NCCL_CHECK(ncclBroadcast(r.send.get(), r.recv.get(), count, ncclFloat, 0, r.comm, r.stream));
  } else if (op == "all_to_all") {
    const std::size_t chunk = elements / static_cast<std::size_t>(n);
    for (int p = 0; p < n; ++p) {
      TRAINSIM_NCCL_CHECK(ncclSend(r.send.get() + static_cast<std::size_t>(p) * chunk, chunk, ncclFloat, p, r.comm,
                                   r.stream));
      TRAINSIM_NCCL_CHECK(ncclRecv(r.recv.get() + static_cast<std::size_t>(p) * chunk, chunk, ncclFloat, p, r.comm,
                                   r.stream));
    }
  } else if (op == "send_recv") {
    TRAINSIM_NCCL_CHECK(ncclSend(r.send.get(), count, ncclFloat, (rank + 1) % n, r.comm, r.stream));
    TRAINSIM_NCCL_CHECK(ncclRecv(r.recv.get(), count, ncclFloat, (rank + n - 1) % n, r.comm, r.stream));
  } else {
    throw std::invalid_argument("unknown collective '" + op + "'");
  }
}

// Inputs: rank r holds (r + 1) * ((i % 7) + 1) at element i (i over its whole send
// buffer); the expected outputs follow from that for each collective.
void fill_inputs(const std::string& op, Rank& r, int rank, int n, std::size_t elements) {
  TRAINSIM_CUDA_CHECK(cudaSetDevice(r.device));
  fill_pattern(r.send.get(), send_count(op, elements, n), rank, 0, r.stream);
  TRAINSIM_CUDA_CHECK(cudaMemsetAsync(r.recv.get(), 0xFF, elements * sizeof(float), r.stream));
}

void check_outputs(const std::string& op, Rank& r, int rank, int n, std::size_t elements) {
  TRAINSIM_CUDA_CHECK(cudaSetDevice(r.device));
  const auto un = static_cast<std::size_t>(n);
  const float sum_scale = static_cast<float>(n * (n + 1) / 2);
  if (op == "all_reduce") {
    count_wrong(r.recv.get(), elements, sum_scale, 0, r.wrong.get(), r.stream);
  } else if (op == "all_gather") {
    const std::size_t chunk = elements / un;
    for (int p = 0; p < n; ++p)
      count_wrong(r.recv.get() + static_cast<std::size_t>(p) * chunk, chunk, static_cast<float>(p + 1), 0,
                  r.wrong.get(), r.stream);
  } else if (op == "reduce_scatter") {
    const std::size_t chunk = elements / un;
    count_wrong(r.recv.get(), chunk, sum_scale, static_cast<std::size_t>(rank) * chunk, r.wrong.get(), r.stream);
  } else if (op == "broadcast") {
    count_wrong(r.recv.get(), elements, 1.0F, 0, r.wrong.get(), r.stream);
  } else if (op == "all_to_all") {
    const std::size_t chunk = elements / un;
    for (int p = 0; p < n; ++p)
      count_wrong(r.recv.get() + static_cast<std::size_t>(p) * chunk, chunk, static_cast<float>(p + 1),
                  static_cast<std::size_t>(rank) * chunk, r.wrong.get(), r.stream);
  } else if (op == "send_recv") {
    count_wrong(r.recv.get(), elements, static_cast<float>((rank + n - 1) % n + 1), 0, r.wrong.get(), r.stream);
  }
}

void run_group(const std::string& op, std::vector<Rank>& ranks, std::size_t elements) {
  const int n = static_cast<int>(ranks.size());
  TRAINSIM_NCCL_CHECK(ncclGroupStart());
  for (int i = 0; i < n; ++i) {
    TRAINSIM_CUDA_CHECK(cudaSetDevice(ranks[static_cast<std::size_t>(i)].device));
    enqueue(op, ranks[static_cast<std::size_t>(i)], i, n, elements);
  }
  TRAINSIM_NCCL_CHECK(ncclGroupEnd());
}

void sync_all(std::vector<Rank>& ranks) {
  for (Rank& r : ranks) {
    TRAINSIM_CUDA_CHECK(cudaSetDevice(r.device));
    TRAINSIM_CUDA_CHECK(cudaStreamSynchronize(r.stream));
  }
}

// Run-to-run spread (issue #11): `iters` more iterations, each timed between events
// on every rank's stream; an iteration takes as long as its slowest rank. The row's
// "seconds" stays nccl-tests' mean over a host-timed loop; these only add its spread.
std::vector<double> iteration_times(std::vector<Rank*> ranks, int iters, const std::function<void()>& iteration) {
  const std::size_t n = ranks.size(), ui = static_cast<std::size_t>(iters);
  std::vector<cudaEvent_t> start(n * ui, nullptr), stop(n * ui, nullptr);
  auto destroy = [&] {
    for (std::size_t e = 0; e < start.size(); ++e) {
      if (start[e] != nullptr) cudaEventDestroy(start[e]);
      if (stop[e] != nullptr) cudaEventDestroy(stop[e]);
    }
  };
  try {
    for (std::size_t r = 0; r < n; ++r) {
      TRAINSIM_CUDA_CHECK(cudaSetDevice(ranks[r]->device));
      for (std::size_t i = 0; i < ui; ++i) {
        TRAINSIM_CUDA_CHECK(cudaEventCreate(&start[r * ui + i]));
        TRAINSIM_CUDA_CHECK(cudaEventCreate(&stop[r * ui + i]));
      }
    }
    for (std::size_t i = 0; i < ui; ++i) {
      for (std::size_t r = 0; r < n; ++r) {
        TRAINSIM_CUDA_CHECK(cudaSetDevice(ranks[r]->device));
        TRAINSIM_CUDA_CHECK(cudaEventRecord(start[r * ui + i], ranks[r]->stream));
      }
      iteration();
      for (std::size_t r = 0; r < n; ++r) {
        TRAINSIM_CUDA_CHECK(cudaSetDevice(ranks[r]->device));
        TRAINSIM_CUDA_CHECK(cudaEventRecord(stop[r * ui + i], ranks[r]->stream));
      }
    }
    std::vector<double> times(ui, 0.0);
    for (std::size_t r = 0; r < n; ++r) {
      TRAINSIM_CUDA_CHECK(cudaSetDevice(ranks[r]->device));
      TRAINSIM_CUDA_CHECK(cudaStreamSynchronize(ranks[r]->stream));
      for (std::size_t i = 0; i < ui; ++i) {
        float ms = 0.0F;
        TRAINSIM_CUDA_CHECK(cudaEventElapsedTime(&ms, start[r * ui + i], stop[r * ui + i]));
        times[i] = std::max(times[i], static_cast<double>(ms) * 1e-3);
      }
    }
    destroy();
    return times;
  } catch (...) {
    destroy();
    throw;
  }
}

// At most this many iterations for the spread, whatever --iters says.
constexpr int kSpreadIterations = 50;

}  // namespace

std::string nccl_version() {
  int v = 0;
  if (ncclGetVersion(&v) != ncclSuccess) return "unknown";
  return std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." + std::to_string(v % 100);
}

void bench_nccl_local(BenchContext& ctx, const NcclOptions& o) {
  int n = 0;
  TRAINSIM_CUDA_CHECK(cudaGetDeviceCount(&n));
  std::vector<int> devices(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) devices[static_cast<std::size_t>(i)] = i;
  std::vector<ncclComm_t> comms(static_cast<std::size_t>(n));
  TRAINSIM_NCCL_CHECK(ncclCommInitAll(comms.data(), n, devices.data()));

  const auto max_elements = static_cast<std::size_t>(o.max_bytes / sizeof(float));
  std::vector<Rank> ranks(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    Rank& r = ranks[static_cast<std::size_t>(i)];
    r.device = i;
    r.comm = comms[static_cast<std::size_t>(i)];
    TRAINSIM_CUDA_CHECK(cudaSetDevice(i));
    TRAINSIM_CUDA_CHECK(cudaStreamCreateWithFlags(&r.stream, cudaStreamNonBlocking));
    r.send = kernels::DeviceBuffer<float>(max_elements);
    r.recv = kernels::DeviceBuffer<float>(max_elements);
    r.wrong = kernels::DeviceBuffer<unsigned long long>(1);
  }

  for (const std::string& op : o.ops) {
    std::fprintf(ctx.log, "# %s: %d ranks in one process, float, out-of-place, %d warm-up + %d timed iterations\n",
                 op.c_str(), n, o.warmup, o.iters);
    std::fprintf(ctx.log, "#       size         count    time(us)  algbw(GB/s)  busbw(GB/s)  #wrong\n");
    for (double b = o.min_bytes; b <= o.max_bytes; b *= o.factor) {
      if (ctx.stopped()) break;
      const std::size_t elements = element_count(op, b, n);
      const double bytes = static_cast<double>(elements * sizeof(float));
      const std::string key = "collectives " + op + " intra_node " + std::to_string(n) + " " +
                              std::to_string(static_cast<long long>(bytes));
      ctx.measure("collectives", key, [&] {
        long long wrong = 0;
        if (o.check) {
          for (int i = 0; i < n; ++i) fill_inputs(op, ranks[static_cast<std::size_t>(i)], i, n, elements);
          sync_all(ranks);
          run_group(op, ranks, elements);
          for (int i = 0; i < n; ++i) {
            Rank& r = ranks[static_cast<std::size_t>(i)];
            TRAINSIM_CUDA_CHECK(cudaSetDevice(r.device));
            TRAINSIM_CUDA_CHECK(cudaMemsetAsync(r.wrong.get(), 0, sizeof(unsigned long long), r.stream));
            check_outputs(op, r, i, n, elements);
          }
          sync_all(ranks);
          for (Rank& r : ranks) wrong += static_cast<long long>(r.wrong.download()[0]);
        }
        for (int w = 0; w < o.warmup; ++w) run_group(op, ranks, elements);
        sync_all(ranks);
        const auto start = std::chrono::steady_clock::now();
        for (int it = 0; it < o.iters; ++it) run_group(op, ranks, elements);
        sync_all(ranks);
        const double seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / o.iters;
        std::vector<Rank*> all;
        for (Rank& r : ranks) all.push_back(&r);
        const Timing spread = summarize(iteration_times(all, std::min(o.iters, kSpreadIterations),
                                                        [&] { run_group(op, ranks, elements); }));
        const double algbw = bytes / seconds / 1e9;
        const double busbw = algbw * bus_factor(op, n);
        std::fprintf(ctx.log, "%12.0f %13zu %11.2f %12.2f %12.2f %7lld\n", bytes, elements, seconds * 1e6, algbw,
                     busbw, wrong);
        return nlohmann::json{{"op", op},           {"scope", "intra_node"}, {"ranks", n},
                              {"nodes", 1},         {"bytes", bytes},        {"seconds", seconds},
                              {"algbw_gbps", algbw}, {"busbw_gbps", busbw},   {"wrong", wrong},
                              {"repeats", spread.repeats}, {"distribution_s", distribution_json(spread)}};
      });
    }
    ctx.profile->flush();
  }
  for (Rank& r : ranks) {
    cudaSetDevice(r.device);
    r.send = {};
    r.recv = {};
    r.wrong = {};
    cudaStreamDestroy(r.stream);
    ncclCommDestroy(r.comm);
  }
  TRAINSIM_CUDA_CHECK(cudaSetDevice(0));
}

#ifdef TRAINSIM_CALIBRATE_WITH_MPI
void bench_nccl_mpi(BenchContext& ctx, const NcclOptions& o) {
  int rank = 0, n = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  // Hosts of all ranks: the scope, and the local rank that picks the GPU.
  char name[MPI_MAX_PROCESSOR_NAME] = {};
  int len = 0;
  MPI_Get_processor_name(name, &len);
  std::vector<char> names(static_cast<std::size_t>(n) * MPI_MAX_PROCESSOR_NAME);
  MPI_Allgather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, names.data(), MPI_MAX_PROCESSOR_NAME, MPI_CHAR,
                MPI_COMM_WORLD);
  int local_rank = 0;
  std::map<std::string, long long> per_host;  // host -> ranks on it
  for (int r = 0; r < n; ++r) {
    const std::string other(&names[static_cast<std::size_t>(r) * MPI_MAX_PROCESSOR_NAME]);
    ++per_host[other];
    if (r < rank && other == name) ++local_rank;
  }
  const bool several_hosts = per_host.size() > 1;
  // "nodes": the distinct hosts, when each runs as many ranks (the profile's rows
  // say ranks / nodes on each); an uneven spread (e.g. -np 12 over 8 + 4) is
  // written without it and prices nothing (docs/calibration.md).
  const int nodes = even_spread_nodes(n, per_host);
  const bool even = nodes > 0;
  int gpus = 0;
  TRAINSIM_CUDA_CHECK(cudaGetDeviceCount(&gpus));
  Rank me;
  me.device = local_rank % gpus;
  TRAINSIM_CUDA_CHECK(cudaSetDevice(me.device));
  ncclUniqueId id{};
  if (rank == 0) TRAINSIM_NCCL_CHECK(ncclGetUniqueId(&id));
  MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
  TRAINSIM_NCCL_CHECK(ncclCommInitRank(&me.comm, n, id, rank));
  TRAINSIM_CUDA_CHECK(cudaStreamCreateWithFlags(&me.stream, cudaStreamNonBlocking));
  const auto max_elements = static_cast<std::size_t>(o.max_bytes / sizeof(float));
  me.send = kernels::DeviceBuffer<float>(max_elements);
  me.recv = kernels::DeviceBuffer<float>(max_elements);
  me.wrong = kernels::DeviceBuffer<unsigned long long>(1);
  const char* scope = several_hosts ? "inter_node" : "intra_node";
  auto one = [&](const std::string& op, std::size_t elements) {
    TRAINSIM_NCCL_CHECK(ncclGroupStart());
    enqueue(op, me, rank, n, elements);
    TRAINSIM_NCCL_CHECK(ncclGroupEnd());
  };

  for (const std::string& op : o.ops) {
    if (rank == 0) {
      std::fprintf(ctx.log,
                   "# %s: %d ranks on %zu hosts%s, one GPU per MPI process (%s), float, out-of-place, %d warm-up + "
                   "%d timed\n",
                   op.c_str(), n, per_host.size(), even ? "" : " (uneven: rows without \"nodes\")", scope, o.warmup,
                   o.iters);
      std::fprintf(ctx.log, "#       size         count    time(us)  algbw(GB/s)  busbw(GB/s)  #wrong\n");
    }
    for (double b = o.min_bytes; b <= o.max_bytes; b *= o.factor) {
      // Every rank takes the same decision to stop (rank 0's Ctrl-C).
      int stop = ctx.stopped() ? 1 : 0;
      MPI_Bcast(&stop, 1, MPI_INT, 0, MPI_COMM_WORLD);
      if (stop != 0) break;
      const std::size_t elements = element_count(op, b, n);
      const double bytes = static_cast<double>(elements * sizeof(float));
      const std::string key = "collectives " + op + " " + scope + " " + std::to_string(n) + " " +
                              std::to_string(static_cast<long long>(bytes));
      // Every rank skips what rank 0's journal has (--resume), together.
      int skip = rank == 0 && ctx.runner->done(key) ? 1 : 0;
      MPI_Bcast(&skip, 1, MPI_INT, 0, MPI_COMM_WORLD);
      if (skip != 0) continue;
      long long wrong = 0;
      if (o.check) {
        fill_inputs(op, me, rank, n, elements);
        TRAINSIM_CUDA_CHECK(cudaStreamSynchronize(me.stream));
        one(op, elements);
        TRAINSIM_CUDA_CHECK(cudaMemsetAsync(me.wrong.get(), 0, sizeof(unsigned long long), me.stream));
        check_outputs(op, me, rank, n, elements);
        TRAINSIM_CUDA_CHECK(cudaStreamSynchronize(me.stream));
        long long mine = static_cast<long long>(me.wrong.download()[0]);
        MPI_Allreduce(&mine, &wrong, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
      }
      for (int w = 0; w < o.warmup; ++w) one(op, elements);
      TRAINSIM_CUDA_CHECK(cudaStreamSynchronize(me.stream));
      MPI_Barrier(MPI_COMM_WORLD);
      const auto start = std::chrono::steady_clock::now();
      for (int it = 0; it < o.iters; ++it) one(op, elements);
      TRAINSIM_CUDA_CHECK(cudaStreamSynchronize(me.stream));
      double mine = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / o.iters;
      double seconds = 0.0;
      MPI_Allreduce(&mine, &seconds, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
      // Each iteration's spread: its slowest rank's event time.
      std::vector<double> mine_each = iteration_times({&me}, std::min(o.iters, kSpreadIterations),
                                                      [&] { one(op, elements); });
      std::vector<double> each(mine_each.size(), 0.0);
      MPI_Allreduce(mine_each.data(), each.data(), static_cast<int>(each.size()), MPI_DOUBLE, MPI_MAX,
                    MPI_COMM_WORLD);
      if (rank != 0) continue;
      const Timing spread = summarize(std::move(each));
      const double algbw = bytes / seconds / 1e9;
      const double busbw = algbw * bus_factor(op, n);
      std::fprintf(ctx.log, "%12.0f %13zu %11.2f %12.2f %12.2f %7lld\n", bytes, elements, seconds * 1e6, algbw,
                   busbw, wrong);
      nlohmann::json row = {{"op", op},           {"scope", scope},   {"ranks", n},
                            {"bytes", bytes},     {"seconds", seconds}, {"algbw_gbps", algbw},
                            {"busbw_gbps", busbw}, {"wrong", wrong}, {"repeats", spread.repeats},
                            {"distribution_s", distribution_json(spread)}};
      if (nodes > 0) row["nodes"] = nodes;
      // Journaled on rank 0 alone; an NCCL error here ends every rank's run (no error row).
      ctx.runner->run("collectives", key, [&] { return row; });
    }
    if (rank == 0) ctx.profile->flush();
  }
  me.send = {};
  me.recv = {};
  me.wrong = {};
  cudaStreamDestroy(me.stream);
  ncclCommDestroy(me.comm);
}
#endif

}  // namespace trainsim::calibrate
